import { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readRecord } from '../agent/agent-fixture.js'
import { startMemoryServer } from '../support/memory-server.js'
import { shownPausedTier } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// Issue 14: `pause({ keepMemory: false })`, `lifecycle.onTimeout.keepMemory: false` and
// `connect({ onResume: 'reboot' })`: the sandbox's files stay, its processes end, and its
// resume boots it over the files, with the same credentials.

let serve: ServeInstance
const opts = () => ({ ...serve.client, timeoutMs: 300_000 })

beforeAll(async () => {
  serve = await startServe()
})

afterAll(async () => {
  expect(await serve?.stop()).toEqual([])
})

/** Gives a sandbox a file, a background process and the memory server; its boot ID. */
async function busySandbox(sandbox: Sandbox): Promise<string> {
  await sandbox.files.write('/home/user/notes.txt', 'before the pause')
  await sandbox.commands.run('sleep 3600', { background: true, timeoutMs: 0 })
  await startMemoryServer(sandbox)
  return bootID(sandbox)
}

async function bootID(sandbox: Sandbox): Promise<string> {
  return sandbox.files.read('/proc/sys/kernel/random/boot_id')
}

/**
 * What of a sandbox's past a boot over its files left: the file, and no old process. A boot
 * is a new one, as the SDK's own tests check it: its boot ID differs from `before`'s.
 */
async function expectBootedOverFiles(sandbox: Sandbox, before: string): Promise<void> {
  expect(await sandbox.isRunning()).toBe(true)
  expect(await sandbox.files.read('/home/user/notes.txt')).toBe('before the pause')
  const processes = await sandbox.commands.run('echo $(pgrep -c -x sleep) $(pgrep -c -x python3)')
  expect(processes.stdout).toBe('0 0\n')
  expect(await bootID(sandbox)).toMatch(BOOT_ID)
  expect(await bootID(sandbox)).not.toBe(before)
}

/** A boot ID as the kernel writes it: a version 4 UUID and a newline. */
const BOOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\n$/

describe('pause without memory', () => {
  it('keeps the files and boots the sandbox at its connect, with the same credentials', async () => {
    const sandbox = await Sandbox.create(opts())
    try {
      const booted = await busySandbox(sandbox)
      await sandbox.pause({ keepMemory: false })
      expect(await sandbox.isRunning()).toBe(false)
      expect((await sandbox.getInfo()).state).toBe('paused')
      expect(await readRecord(serve.dataDir, sandbox.sandboxId)).toMatchObject({
        state: 'paused',
        filesOnly: true,
      })
      const files = { pausedTier: 'files', checkpointBytes: undefined }
      expect(await shownPausedTier(serve.client, sandbox.sandboxId)).toEqual({
        detail: files,
        listed: files,
      })

      const resumed = await sandbox.connect()
      expect(resumed.sandboxId).toBe(sandbox.sandboxId)
      await expectBootedOverFiles(sandbox, booted)
      expect((await sandbox.commands.run('echo $((6 * 7))')).stdout).toBe('42\n')
    } finally {
      await sandbox.kill()
    }
  })

  it("pauses at the timeout without memory when the lifecycle says so, and reboots at onResume: 'reboot'", async () => {
    const sandbox = await Sandbox.create({
      ...opts(),
      timeoutMs: 4_000,
      lifecycle: { onTimeout: { action: 'pause', keepMemory: false } },
    })
    try {
      const firstBoot = await busySandbox(sandbox)
      await expect
        .poll(async () => (await Sandbox.getInfo(sandbox.sandboxId, opts())).state, {
          timeout: 20_000,
        })
        .toBe('paused')
      expect((await readRecord(serve.dataDir, sandbox.sandboxId)).filesOnly).toBe(true)
      await Sandbox.connect(sandbox.sandboxId, opts())
      await expectBootedOverFiles(sandbox, firstBoot)

      // Paused with its memory, a reboot resume drops it too.
      const secondBoot = await busySandbox(sandbox)
      await sandbox.pause()
      const frozen = { pausedTier: 'memory', checkpointBytes: undefined }
      expect(await shownPausedTier(serve.client, sandbox.sandboxId)).toEqual({
        detail: frozen,
        listed: frozen,
      })
      await Sandbox.connect(sandbox.sandboxId, { ...opts(), onResume: 'reboot' })
      await expectBootedOverFiles(sandbox, secondBoot)
    } finally {
      await sandbox.kill()
    }
  })
})
