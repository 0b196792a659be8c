import { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readRecord } from '../agent/agent-fixture.js'
import { simulateReboot } from '../support/host-reboot.js'
import { memoryServerAnswer, startMemoryServer } from '../support/memory-server.js'
import { shownPausedTier } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// Issue 14: a paused sandbox moves from memory to disk (CRIU) and comes back with its
// processes running, through a SIGKILL of `sandbar serve`.

let serve: ServeInstance
const opts = () => ({ ...serve.client, timeoutMs: 300_000 })

beforeAll(async () => {
  // 0: every paused sandbox hibernates at the next pass, about a second after its pause.
  serve = await startServe(['--hibernate-after', '0', '--hibernate'])
})

afterAll(async () => {
  expect(await serve?.stop()).toEqual([])
})

describe('hibernation', () => {
  it('resumes a paused sandbox from disk, processes and memory intact, after SIGKILL of serve', async () => {
    const sandbox = await Sandbox.create(opts())
    await sandbox.files.write('/home/user/notes.txt', 'before the pause')
    const secret = await startMemoryServer(sandbox)
    const bootID = await sandbox.files.read('/proc/sys/kernel/random/boot_id')

    await sandbox.pause()
    await expect
      .poll(async () => (await readRecord(serve.dataDir, sandbox.sandboxId)).hibernated, {
        timeout: 30_000,
      })
      .toBe(true)
    const info = await Sandbox.getInfo(sandbox.sandboxId, opts())
    expect(info.state).toBe('paused')
    const shown = await shownPausedTier(serve.client, sandbox.sandboxId)
    expect(shown.detail).toEqual(shown.listed)
    expect(shown.detail?.pausedTier).toBe('disk')
    expect(shown.detail?.checkpointBytes).toBeGreaterThan(1024 * 1024)
    await serve.crashAndRestart()

    const resumed = await Sandbox.connect(sandbox.sandboxId, opts())
    expect(await memoryServerAnswer(resumed)).toBe(`${secret} 3`)
    expect(await resumed.files.read('/home/user/notes.txt')).toBe('before the pause')
    // Its processes went on, so its boot did too.
    expect(await resumed.files.read('/proc/sys/kernel/random/boot_id')).toBe(bootID)
    const run = await resumed.commands.run('echo $((6 * 7))')
    expect(run).toMatchObject({ exitCode: 0, stdout: '42\n' })
    expect((await Sandbox.getInfo(sandbox.sandboxId, opts())).state).toBe('running')
    await resumed.kill()
  })

  it('survives a host reboot when serve stopped with --hibernate while it ran', async () => {
    const sandbox = await Sandbox.create(opts())
    const secret = await startMemoryServer(sandbox)
    await serve.restart(() => simulateReboot(serve.dataDir, serve.prefix, [sandbox.sandboxId]))
    expect((await readRecord(serve.dataDir, sandbox.sandboxId)).hibernated).toBe(true)
    expect((await Sandbox.getInfo(sandbox.sandboxId, opts())).state).toBe('paused')
    const resumed = await Sandbox.connect(sandbox.sandboxId, opts())
    expect(await memoryServerAnswer(resumed)).toBe(`${secret} 3`)
    await resumed.kill()
  })

  it('wakes a sandbox that paused at its timeout and hibernated at its next request', async () => {
    const sandbox = await Sandbox.create({
      ...opts(),
      timeoutMs: 5_000,
      lifecycle: { onTimeout: 'pause', autoResume: true },
    })
    const secret = await startMemoryServer(sandbox)
    await expect
      .poll(async () => (await readRecord(serve.dataDir, sandbox.sandboxId)).hibernated, {
        timeout: 30_000,
      })
      .toBe(true)
    // The SDK's own request through the proxy restores it (§4.4), state and all.
    expect(await memoryServerAnswer(sandbox)).toBe(`${secret} 3`)
    await sandbox.kill()
  })
})
