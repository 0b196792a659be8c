import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { hostNames } from '../../src/agent/host-names.js'
import { SandboxRecords } from '../../src/agent/sandbox-record.js'
import { simulateReboot } from '../support/host-reboot.js'
import { memoryServerCommand, memoryServerState } from '../support/memory-server.js'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import { readRecord, sandboxRequest, startTestAgent, type TestAgent } from './agent-fixture.js'
import { leftoverCgroupDirs, readLimits } from './cgroup-probe.js'

/** The v1 device cgroup's allow-list; none on cgroup v2, where it is an eBPF program. */
async function readDeviceRules(cgroupPath: string): Promise<string | undefined> {
  return readFile(join('/sys/fs/cgroup/devices', cgroupPath, 'devices.list'), 'utf8').catch(
    () => undefined,
  )
}

/**
 * Hibernates a sandbox that holds state in a process's memory, stops its agent (and with
 * `reboot` takes what a host restart takes; with `recordLost` its record is as an agent that
 * died between the dump and saving it left it), starts a new agent and resumes the sandbox.
 */
async function hibernateRestartResume({
  reboot = false,
  recordLost = false,
}: {
  reboot?: boolean
  recordLost?: boolean
}): Promise<void> {
  const first = await startTestAgent()
  let second: TestAgent | undefined
  try {
    const created = await first.agent.create(sandboxRequest())
    const { sandboxID, address } = created
    const { cgroupPath } = hostNames(first.config.prefix, sandboxID)
    const limits = await readLimits(cgroupPath)
    const devices = await readDeviceRules(cgroupPath)
    const sandbox = sandboxForEnvd(created.envdURL)
    await sandbox.files.write('/home/user/notes.txt', 'written before')
    await sandbox.commands.run(memoryServerCommand('0.0.0.0'), { background: true, timeoutMs: 0 })
    await expect.poll(() => memoryServerState(address).catch(() => undefined)).toBeDefined()
    const before = await memoryServerState(address)

    await first.agent.pause(sandboxID)
    await first.agent.hibernate(sandboxID)
    expect(await first.agent.get(sandboxID)).toMatchObject({ state: 'paused', hibernated: true })
    // Its processes are gone, and with them their memory.
    const procs = await Promise.all(
      (await leftoverCgroupDirs(cgroupPath)).map((dir) =>
        readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => ''),
      ),
    )
    expect(procs.join('')).toBe('')
    await first.agent.close()
    if (reboot) await simulateReboot(first.config.dataDir, first.config.prefix, [sandboxID])
    if (recordLost) {
      const records = new SandboxRecords(join(first.config.dataDir, 'sandboxes'))
      await records.save({
        ...(await readRecord(first.config.dataDir, sandboxID)),
        hibernated: undefined,
      })
    }

    second = await startTestAgent({ dataDir: first.config.dataDir, prefix: first.config.prefix })
    expect(second.agent.reconciled).toEqual({ adopted: [sandboxID], removed: [] })
    await second.agent.resume(sandboxID)
    expect(await second.agent.get(sandboxID)).toMatchObject({
      state: 'running',
      hibernated: false,
    })
    expect(await memoryServerState(address)).toEqual({
      secret: before.secret,
      hits: before.hits + 1,
    })
    expect(await readLimits(cgroupPath)).toEqual(limits)
    expect(await readDeviceRules(cgroupPath)).toEqual(devices)
    const again = sandboxForEnvd(created.envdURL)
    expect(await again.files.read('/home/user/notes.txt')).toBe('written before')
    expect((await again.commands.run('echo restored')).stdout).toBe('restored\n')
    expect((await readRecord(first.config.dataDir, sandboxID)).hibernated).toBeUndefined()
  } finally {
    const agent = second ?? first
    expect(await agent.dispose()).toEqual([])
  }
}

describe('hibernate', () => {
  it('keeps a paused sandbox on disk, without its memory, through an agent restart', () =>
    hibernateRestartResume({}))

  it('keeps a hibernated sandbox through a host reboot', () =>
    hibernateRestartResume({ reboot: true }))

  it('takes a complete checkpoint whose record an agent crash left unsaved as hibernated', () =>
    hibernateRestartResume({ recordLost: true }))
})
