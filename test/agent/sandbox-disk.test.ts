import { stat, statfs, writeFile } from 'node:fs/promises'
import { CommandExitError } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runHostCommand } from '../../src/agent/host-command.js'
import type { SandboxInfo } from '../../src/agent/index.js'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import { readRecord, sandboxRequest, startTestAgent, type TestAgent } from './agent-fixture.js'

// Issue 9 item 8: each sandbox's writes land on a disk of its own size, with its own inodes,
// never on the host's filesystem.

const DISK_MB = 512
const MIB = 1024 * 1024

let test: TestAgent
let info: SandboxInfo

beforeAll(async () => {
  test = await startTestAgent()
  info = await test.agent.create(sandboxRequest({ diskSizeMB: DISK_MB }))
})

afterAll(async () => {
  const leaks = await test?.dispose()
  expect(leaks).toEqual([])
})

/** Free bytes of the filesystem holding the agent's data directory (the host's). */
async function hostFreeBytes(): Promise<number> {
  const stats = await statfs(test.config.dataDir)
  return stats.bavail * stats.bsize
}

describe("a sandbox's disk", () => {
  it('is its own size as df sees it inside', async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    const df = await sandbox.commands.run('df -B1M --output=size,avail / | tail -1')
    const [size = 0, avail = 0] = df.stdout.trim().split(/\s+/).map(Number)
    expect(size).toBeGreaterThan(DISK_MB * 0.9)
    expect(size).toBeLessThanOrEqual(DISK_MB)
    expect(avail).toBeLessThanOrEqual(size)
  })

  it('ends in ENOSPC inside when full, and the host pays for no more than its size', async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    const before = await hostFreeBytes()
    const fill = sandbox.commands.run(
      'dd if=/dev/zero of=/home/user/fill bs=1M count=1024 status=none',
      { timeoutMs: 60_000 },
    )
    await expect(fill).rejects.toBeInstanceOf(CommandExitError)
    await expect(fill).rejects.toMatchObject({
      stderr: expect.stringContaining('No space left on device'),
    })
    // Other suites share the host's disk: allow their churn, not a whole gigabyte.
    expect(before - (await hostFreeBytes())).toBeLessThan((DISK_MB + 128) * MIB)
    // Root inside has no reserve beyond the user's: the sandbox's root is no host root.
    const asRoot = sandbox.commands.run('dd if=/dev/zero of=/root/more bs=4k count=1024', {
      user: 'root',
    })
    await expect(asRoot).rejects.toMatchObject({
      stderr: expect.stringContaining('No space left on device'),
    })
    await sandbox.commands.run('rm /root/more', { user: 'root' })
    await sandbox.commands.run('rm /home/user/fill')
    expect((await sandbox.commands.run('echo freed > /home/user/ok && cat ok')).stdout).toBe(
      'freed\n',
    )
  })

  it('keeps envd answering once the sandbox fills it, so the sandbox can free it', async () => {
    // envd logs two lines a command to the sandbox's output file, on this disk: with the disk
    // full those writes fail, and cost the lines, never envd.
    const full = await test.agent.create(sandboxRequest({ diskSizeMB: 64 }))
    const sandbox = sandboxForEnvd(full.envdURL)
    const fill = [
      'dd if=/dev/zero of=/root/fill bs=1M status=none',
      'for i in $(seq 4096); do head -c 512 /dev/zero > /root/s$i || break; done',
      'df --output=avail / | tail -1',
    ].join('; ')
    const filled = await sandbox.commands.run(fill, { user: 'root', timeoutMs: 60_000 })
    expect(filled.stdout.trim()).toBe('0')
    // Well past a 4 KiB block of log lines; each would otherwise hang on the first refusal.
    for (let i = 0; i < 64; i++) {
      expect((await sandbox.commands.run('true', { requestTimeoutMs: 10_000 })).exitCode).toBe(0)
    }
    await sandbox.commands.run('rm -f /root/fill /root/s*', { user: 'root' })
    expect((await sandbox.commands.run('echo room > again && cat again')).stdout).toBe('room\n')
    await test.agent.kill(full.sandboxID)
  })

  it('runs out of inodes after its own share, not the host share', async () => {
    const sandbox = sandboxForEnvd(info.envdURL)
    const script = [
      'import os',
      'os.makedirs("/home/user/many", exist_ok=True)',
      'n = 0',
      'try:',
      '    while n < 200000:',
      '        open(f"/home/user/many/{n}", "w").close()',
      '        n += 1',
      'except OSError as e:',
      '    print(n, e.strerror)',
    ].join('\n')
    await sandbox.files.write('/home/user/many.py', script)
    const result = await sandbox.commands.run('python3 many.py', { timeoutMs: 60_000 })
    const [count = '', ...reason] = result.stdout.trim().split(' ')
    expect(reason.join(' ')).toBe('No space left on device')
    expect(Number(count)).toBeLessThan(DISK_MB * 64)
    await sandbox.commands.run('rm -rf /home/user/many', { timeoutMs: 60_000 })
  })
})

describe("a sandbox's output file", () => {
  it("is the service's: root's, on the sandbox's disk, out of reach of the sandbox's host IDs", async () => {
    const output = `${test.config.dataDir}/sandboxes/${info.sandboxID}/disk/output.log`
    const stats = await stat(output)
    expect({ uid: stats.uid, gid: stats.gid, mode: stats.mode & 0o777 }).toEqual({
      uid: 0,
      gid: 0,
      mode: 0o600,
    })
    // The sandbox's root as the host sees it: neither the file nor its directory is its.
    const id = String((await readRecord(test.config.dataDir, info.sandboxID)).idMap.hostID)
    const write = runHostCommand('setpriv', [
      ...['--reuid', id, '--regid', id, '--clear-groups'],
      ...['sh', '-c', `echo forged >> ${output}`],
    ])
    await expect(write).rejects.toMatchObject({
      stderr: expect.stringContaining('Permission denied'),
    })
  })

  it('is append-only: no one rewrites what the sandbox printed, not even host root', async () => {
    const output = `${test.config.dataDir}/sandboxes/${info.sandboxID}/disk/output.log`
    const [flags] = (await runHostCommand('lsattr', [output])).split(' ')
    expect(flags).toContain('a')
    await expect(writeFile(output, 'forged')).rejects.toMatchObject({ code: 'EPERM' })
  })
})
