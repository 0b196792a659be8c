import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { hostNames } from '../../src/agent/host-names.js'
import { memoryServerCommand, memoryServerState } from '../support/memory-server.js'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import { baseTemplate, readRecord, sandboxRequest, startTestAgent } from './agent-fixture.js'

/** The host UIDs of every process in the sandbox's container (its cgroup). */
async function hostUIDs(prefix: string, sandboxID: string): Promise<number[]> {
  const { cgroupPath } = hostNames(prefix, sandboxID)
  const procs = await readFile(join('/sys/fs/cgroup/pids', cgroupPath, 'cgroup.procs'), 'utf8')
    .catch(() => readFile(join('/sys/fs/cgroup', cgroupPath, 'cgroup.procs'), 'utf8'))
    .catch(() => '')
  const uids = await Promise.all(
    procs
      .split('\n')
      .filter(Boolean)
      .map(async (pid) => {
        const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '')
        return Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN)
      }),
  )
  return uids.filter((uid) => !Number.isNaN(uid))
}

describe('snapshot', () => {
  it('starts new sandboxes with the source’s processes and files, each its own', async () => {
    const test = await startTestAgent()
    const { agent, config } = test
    const snapshotID = `t-${randomBytes(4).toString('hex')}`
    try {
      const source = await agent.create(sandboxRequest())
      const sourceSandbox = sandboxForEnvd(source.envdURL)
      await sourceSandbox.files.write('/home/user/notes.txt', 'written before')
      await sourceSandbox.commands.run(memoryServerCommand('0.0.0.0'), {
        background: true,
        timeoutMs: 0,
      })
      await expect
        .poll(() => memoryServerState(source.address).catch(() => undefined))
        .toBeDefined()
      const before = await memoryServerState(source.address)
      // A service on loopback only, which envd forwards from the source's own address.
      await sourceSandbox.commands.run(
        'cd /home/user && python3 -m http.server -b 127.0.0.1 8001',
        {
          background: true,
          timeoutMs: 0,
        },
      )
      const listing = (address: string) =>
        fetch(`http://${address}:8001/`).then((response) => response.text())
      await expect
        .poll(() => listing(source.address).catch(() => ''), { timeout: 10_000 })
        .toContain('notes.txt')

      const layerID = `s-${randomBytes(16).toString('hex')}`
      const report = await agent.snapshot(source.sandboxID, snapshotID, layerID)
      expect(report.layers).toEqual([...source.layers, layerID])
      expect(report.imageBytes).toBeGreaterThan(0)
      // The source runs on, its memory as it was.
      expect(await agent.get(source.sandboxID)).toMatchObject({ state: 'running' })
      expect(await memoryServerState(source.address)).toEqual({ ...before, hits: before.hits + 1 })

      const template = baseTemplate({ templateID: 'snap', layers: report.layers, snapshotID })
      const token = randomBytes(16).toString('hex')
      const [a, b] = [
        await agent.create(
          sandboxRequest({ template, accessToken: token, envVars: { ROLE: 'first' } }),
        ),
        await agent.create(sandboxRequest({ template, envVars: { ROLE: 'second' } })),
      ]
      // Each has the source's process with the memory it had at the snapshot.
      expect(await memoryServerState(a.address)).toEqual({ ...before, hits: before.hits + 1 })
      expect(await memoryServerState(b.address)).toEqual({ ...before, hits: before.hits + 1 })
      // The loopback service is forwarded from each one's own address.
      await expect
        .poll(() => listing(a.address).catch(() => ''), { timeout: 10_000 })
        .toContain('notes.txt')

      // Each has its own identity: token, env, sandbox ID, host IDs.
      const forA = sandboxForEnvd(a.envdURL, token)
      await expect(sandboxForEnvd(a.envdURL).commands.run('true')).rejects.toThrow()
      const envA = await forA.commands.run('echo $ROLE $E2B_SANDBOX_ID')
      expect(envA.stdout).toBe(`first ${a.sandboxID}\n`)
      const forB = sandboxForEnvd(b.envdURL)
      expect((await forB.commands.run('echo $ROLE $E2B_SANDBOX_ID')).stdout).toBe(
        `second ${b.sandboxID}\n`,
      )
      for (const sandbox of [source, a, b]) {
        const { idMap } = await readRecord(config.dataDir, sandbox.sandboxID)
        const uids = await hostUIDs(config.prefix, sandbox.sandboxID)
        expect(uids.length).toBeGreaterThan(0)
        for (const uid of uids) {
          expect(uid).toBeGreaterThanOrEqual(idMap.hostID)
          expect(uid).toBeLessThan(idMap.hostID + idMap.size)
        }
      }

      // Files: the source's at the snapshot, then each sandbox's own.
      expect(await forA.files.read('/home/user/notes.txt')).toBe('written before')
      await forA.files.write('/home/user/notes.txt', 'written in a')
      expect(await forB.files.read('/home/user/notes.txt')).toBe('written before')
      expect(await sourceSandbox.files.read('/home/user/notes.txt')).toBe('written before')

      // Removed, the snapshot starts nothing more; its sandboxes live on.
      await agent.removeSnapshot(snapshotID)
      await expect(agent.create(sandboxRequest({ template }))).rejects.toThrow(/snap/)
      expect((await forB.commands.run('echo alive')).stdout).toBe('alive\n')
    } finally {
      await agent.removeSnapshot(snapshotID)
      expect(await test.dispose()).toEqual([])
    }
  })
})
