import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxInfo } from '../../src/agent/index.js'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import { baseTemplate, startTestAgent, type TestAgent } from './agent-fixture.js'

// The opt-in hardened runtime end to end: the base template and envd under gVisor, chosen by
// the agent's configuration and recorded on the sandbox. scripts/setup.sh installs runsc.

let test: TestAgent
let info: SandboxInfo

const request = () => ({
  sandboxID: `i${randomBytes(10).toString('hex')}`,
  template: baseTemplate(),
  cpuCount: 1,
  // gVisor keeps /tmp and its own kernel in the sandbox's memory.
  memoryMB: 512,
  diskSizeMB: 512,
  envVars: {},
  egress: { allowOut: [], denyOut: [] },
})

beforeAll(async () => {
  test = await startTestAgent({ runtime: 'runsc' })
  info = await test.agent.create(request())
})

afterAll(async () => {
  const leaks = await test?.dispose()
  expect(leaks).toEqual([])
})

describe('a sandbox on runsc', () => {
  it('records its runtime and runs commands as user and root under gVisor’s kernel', async () => {
    expect(info.runtime).toBe('runsc')
    const sandbox = sandboxForEnvd(info.envdURL)
    const asUser = await sandbox.commands.run('id -un; pwd; python3 -c "print(6*7)"')
    expect(asUser.stdout).toBe('user\n/home/user\n42\n')
    // gVisor's kernel calls itself 4.4.0; its log (dmesg) is refused by the seccomp profile.
    const asRoot = await sandbox.commands.run('id -u; uname -r; dmesg || echo refused', {
      user: 'root',
    })
    expect(asRoot.stdout).toBe('0\n4.4.0\nrefused\n')
  })

  it('moves files through envd', async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    await sandbox.files.write('/home/user/note.txt', 'under gVisor')
    expect(await sandbox.files.read('/home/user/note.txt')).toBe('under gVisor')
    expect((await sandbox.files.getInfo('/home/user/note.txt')).owner).toBe('user')
  })

  it('pauses and resumes', async () => {
    await test.agent.pause(info.sandboxID)
    expect((await test.agent.get(info.sandboxID))?.state).toBe('paused')
    await test.agent.resume(info.sandboxID)
    const sandbox = sandboxForEnvd(info.envdURL)
    expect((await sandbox.commands.run('echo awake')).stdout).toBe('awake\n')
  })
})

describe('a change of runtime', () => {
  it('keeps a crun sandbox working under an agent restarted on runsc, beside a runsc one', async () => {
    // A pool of its own: the agent of the tests above still holds the first addresses of the
    // default one, and two agents on one host must not share a pool.
    const addressPool = '10.232.0.0/16'
    const crun = await startTestAgent({ runtime: 'crun', addressPool })
    const { dataDir, prefix } = crun.config
    const onCrun = await crun.agent.create({ ...request(), memoryMB: 256 })
    await crun.agent.close()

    const runsc = await startTestAgent({ runtime: 'runsc', dataDir, prefix, addressPool })
    try {
      expect(runsc.agent.reconciled).toEqual({ adopted: [onCrun.sandboxID], removed: [] })
      const onRunsc = await runsc.agent.create(request())
      expect([onCrun.runtime, onRunsc.runtime]).toEqual(['crun', 'runsc'])
      await runsc.agent.pause(onCrun.sandboxID)
      await runsc.agent.resume(onCrun.sandboxID)
      const kernel = (info: SandboxInfo) => sandboxForEnvd(info.envdURL).commands.run('uname -r')
      expect((await kernel(onCrun)).stdout).not.toBe('4.4.0\n')
      expect((await kernel(onRunsc)).stdout).toBe('4.4.0\n')
    } finally {
      expect(await runsc.dispose()).toEqual([])
    }
  })
})
