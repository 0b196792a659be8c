import { describe, expect, it } from 'vitest'
import { hostNames } from '../../src/agent/host-names.js'
import { simulateReboot } from '../support/host-reboot.js'
import { memoryServerCommand, memoryServerState } from '../support/memory-server.js'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import { baseTemplate, sandboxRequest, startTestAgent, type TestAgent } from './agent-fixture.js'
import { leftoverCgroupDirs } from './cgroup-probe.js'

describe('pause without memory', () => {
  it('keeps only the files, through a restart and a host reboot, and boots the sandbox on resume', async () => {
    const first = await startTestAgent()
    let second: TestAgent | undefined
    try {
      const template = baseTemplate({
        startCmd: memoryServerCommand('0.0.0.0'),
        readyCmd: 'python3 -c "import urllib.request as u; u.urlopen(\'http://127.0.0.1:8000/\')"',
      })
      const token = 'files-only-token'
      const created = await first.agent.create(
        sandboxRequest({ template, accessToken: token, envVars: { KEPT: 'yes' } }),
      )
      const { sandboxID, address } = created
      const sandbox = sandboxForEnvd(created.envdURL, token)
      await sandbox.files.write('/home/user/notes.txt', 'written before')
      await sandbox.commands.run('sleep 3600', { background: true, timeoutMs: 0 })
      const before = await memoryServerState(address)

      await first.agent.pause(sandboxID, { keepMemory: false })
      expect(await first.agent.get(sandboxID)).toMatchObject({
        state: 'paused',
        filesOnly: true,
        hibernated: false,
      })
      const { cgroupPath } = hostNames(first.config.prefix, sandboxID)
      expect(await leftoverCgroupDirs(cgroupPath)).toEqual([])
      await expect(fetch(`${created.envdURL}/health`)).rejects.toThrow()
      // Nothing runs to hibernate.
      await first.agent.hibernate(sandboxID)
      await first.agent.updateNetwork(sandboxID, { allowOut: [], denyOut: ['0.0.0.0/0'] })
      await first.agent.close()
      await simulateReboot(first.config.dataDir, first.config.prefix, [sandboxID])

      second = await startTestAgent({ dataDir: first.config.dataDir, prefix: first.config.prefix })
      expect(second.agent.reconciled).toEqual({ adopted: [sandboxID], removed: [] })
      await second.agent.resume(sandboxID)
      expect(await second.agent.get(sandboxID)).toMatchObject({
        state: 'running',
        filesOnly: false,
      })
      // Its files, env and token as they were; its processes booted anew.
      expect(await sandbox.files.read('/home/user/notes.txt')).toBe('written before')
      const run = await sandbox.commands.run('echo $KEPT; pgrep -c -x sleep || true')
      expect(run.stdout).toBe('yes\n0\n')
      const after = await memoryServerState(address)
      expect(after.secret).not.toBe(before.secret)
      await expect(sandboxForEnvd(created.envdURL).commands.run('true')).rejects.toThrow()

      // Paused with memory again, it thaws as before.
      await second.agent.pause(sandboxID)
      await second.agent.resume(sandboxID)
      expect((await memoryServerState(address)).secret).toBe(after.secret)

      // A reboot resume drops what memory it kept, frozen or hibernated, and boots.
      const secrets = new Set([before.secret, after.secret])
      for (const hibernate of [false, true]) {
        await second.agent.pause(sandboxID)
        if (hibernate) await second.agent.hibernate(sandboxID)
        await second.agent.resume(sandboxID, { reboot: true })
        expect(await second.agent.get(sandboxID)).toMatchObject({
          state: 'running',
          filesOnly: false,
          hibernated: false,
        })
        const { secret } = await memoryServerState(address)
        expect(secrets.has(secret)).toBe(false)
        secrets.add(secret)
        expect(await sandbox.files.read('/home/user/notes.txt')).toBe('written before')
      }
    } finally {
      const agent = second ?? first
      expect(await agent.dispose()).toEqual([])
    }
  })
})
