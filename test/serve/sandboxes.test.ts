import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { AuthenticationError, CommandExitError, Sandbox, SandboxNotFoundError } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compileExecLoop } from '../support/exec-loop.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

/** The kernel's ID of the boot, which a VM-backed sandbox gets anew at each start. */
const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id'

let serve: ServeInstance
const opts = () => ({ ...serve.client })

beforeAll(async () => {
  serve = await startServe()
})

afterAll(async () => {
  const leaks = await serve?.stop()
  expect(leaks).toEqual([])
})

/** Polls `check` until it returns true or `timeoutMs` passes. */
async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  return false
}

describe('sandbar serve', () => {
  it('prints how to point the SDK at it', async () => {
    await expect.poll(() => serve.output(), { timeout: 5_000 }).toContain('set -a; . ')
    const printed = serve.output()
    for (const line of serve.clientEnvText.trim().split('\n')) {
      expect(printed).toContain(`  export ${line}\n`)
    }
    expect(printed).toMatch(/set -a; \. \/tmp\/sbt-serve-data-\w+\/client\.env; set \+a/)
  })

  it('prints the sandbox limit it derived from the host, and what bounds it', () => {
    const resources = ['memory', 'pids', 'open files', 'the address pool']
    const line = serve
      .output()
      .split('\n')
      .find((text) => text.startsWith('Up to '))
    expect(line).toMatch(
      /^Up to (\d+) sandboxes at once, the most this host holds with every sandbox at its limits: \1 by .+\. Set another limit with --max-sandboxes N\.$/,
    )
    for (const resource of resources) expect(line).toContain(` by ${resource} (`)
  })

  it('answers /health without a key', async () => {
    expect((await fetch(`${serve.client.apiUrl}/health`)).status).toBe(204)
  })
})

describe('Sandbox.create through the SDK', () => {
  it('runs commands and moves files through the proxy, with metadata and envs', async () => {
    const sandbox = await Sandbox.create({
      ...opts(),
      metadata: { suite: 'serve', run: 'one' },
      envs: { SBT_GREETING: 'hello' },
    })
    try {
      expect(sandbox.sandboxId).toMatch(/^i[a-z0-9]{20}$/)
      const echo = await sandbox.commands.run('echo hi')
      expect(echo.stdout).toBe('hi\n')
      const env = await sandbox.commands.run('echo $SBT_GREETING')
      expect(env.stdout).toBe('hello\n')
      await sandbox.files.write('/home/user/note.txt', 'through the proxy')
      expect(await sandbox.files.read('/home/user/note.txt')).toBe('through the proxy')

      const info = await sandbox.getInfo()
      expect(info).toMatchObject({
        sandboxId: sandbox.sandboxId,
        templateId: 'base',
        metadata: { suite: 'serve', run: 'one' },
        state: 'running',
        cpuCount: 2,
        memoryMB: 512,
      })
      const listed = await Sandbox.list({
        ...opts(),
        query: { metadata: { run: 'one' } },
      }).nextItems()
      expect(listed.map((s) => s.sandboxId)).toEqual([sandbox.sandboxId])
      const none = await Sandbox.list({
        ...opts(),
        query: { metadata: { run: 'two' } },
      }).nextItems()
      expect(none).toEqual([])
    } finally {
      await sandbox.kill()
    }
  })

  it('kills a sandbox, after which it is not found', async () => {
    const sandbox = await Sandbox.create(opts())
    // The SDK sends no timeout to POST /v2/sandboxes; the v2 default is 300 s (Addendum).
    const { startedAt, endAt } = await sandbox.getInfo()
    expect((endAt.getTime() - startedAt.getTime()) / 1000).toBe(300)
    await sandbox.kill()
    expect(await Sandbox.kill(sandbox.sandboxId, opts())).toBe(false)
    await expect(Sandbox.getInfo(sandbox.sandboxId, opts())).rejects.toBeInstanceOf(
      SandboxNotFoundError,
    )
    const answer = await fetch(`${serve.client.apiUrl}/sandboxes/${sandbox.sandboxId}`, {
      method: 'DELETE',
      headers: { 'X-API-Key': serve.client.apiKey },
    })
    expect(answer.status).toBe(404)
    expect(await answer.json()).toEqual({
      code: 404,
      message: `Sandbox "${sandbox.sandboxId}" doesn't exist or you don't have access to it`,
    })
  })

  it('kills a sandbox when a shortened timeout passes', async () => {
    const sandbox = await Sandbox.create(opts())
    await sandbox.setTimeout(2000)
    const gone = await eventually(
      async () => !(await sandbox.isRunning().catch(() => false)),
      10_000,
    )
    expect(gone).toBe(true)
    await expect(sandbox.getInfo()).rejects.toBeInstanceOf(SandboxNotFoundError)
  })

  it('kills twelve sandboxes at once: each is gone at once, and all leave the host', async () => {
    const sandboxes = await Promise.all(Array.from({ length: 12 }, () => Sandbox.create(opts())))
    expect(await Promise.all(sandboxes.map((sandbox) => sandbox.kill()))).toEqual(
      sandboxes.map(() => true),
    )
    for (const sandbox of sandboxes) {
      await expect(sandbox.getInfo()).rejects.toBeInstanceOf(SandboxNotFoundError)
    }
    // Their teardowns follow the answers, a few at a time; the record's directory goes last.
    const leftOnHost = () =>
      sandboxes.filter(
        (sandbox) =>
          existsSync(`/run/netns/${serve.prefix}-${sandbox.sandboxId}`) ||
          existsSync(path.join(serve.dataDir, 'sandboxes', sandbox.sandboxId)),
      )
    const allGone = await eventually(async () => leftOnHost().length === 0, 60_000)
    expect(allGone).toBe(true)
  })

  it('rejects a bad API key', async () => {
    await expect(
      Sandbox.create({ ...opts(), apiKey: `e2b_${'0'.repeat(40)}` }),
    ).rejects.toBeInstanceOf(AuthenticationError)
  })

  it('reports an unknown template with the contract text', async () => {
    await expect(Sandbox.create('no-such-template', opts())).rejects.toThrow(
      "404: template 'no-such-template' not found",
    )
  })

  it('pauses at the timeout and resumes on connect with its files', async () => {
    const sandbox = await Sandbox.create({
      ...opts(),
      timeoutMs: 3000,
      lifecycle: { onTimeout: 'pause' },
    })
    try {
      await sandbox.files.write('/home/user/kept.txt', 'still here')
      const paused = await eventually(
        async () => (await sandbox.getInfo()).state === 'paused',
        15_000,
      )
      expect(paused).toBe(true)
      expect(await Sandbox.pause(sandbox.sandboxId, opts())).toBe(false)
      const resumed = await Sandbox.connect(sandbox.sandboxId, opts())
      expect((await resumed.getInfo()).state).toBe('running')
      expect(await resumed.files.read('/home/user/kept.txt')).toBe('still here')
    } finally {
      await Sandbox.kill(sandbox.sandboxId, opts())
    }
  })

  it('pauses on request, and a second pause reports it already paused', async () => {
    const sandbox = await Sandbox.create(opts())
    try {
      const bootID = await sandbox.files.read(BOOT_ID_FILE)
      expect(await sandbox.pause()).toBe(true)
      expect(await sandbox.pause()).toBe(false)
      const resumed = await Sandbox.connect(sandbox.sandboxId, opts())
      expect((await resumed.commands.run('echo back')).stdout).toBe('back\n')
      // Resumed with its memory, it goes on in the same boot.
      expect(await resumed.files.read(BOOT_ID_FILE)).toBe(bootID)
    } finally {
      await sandbox.kill()
    }
  })

  it('pauses and resumes a sandbox whose processes exec themselves with threads, without end', async () => {
    const dir = await mkdtemp('/tmp/sbt-exec-loop-')
    const sandbox = await Sandbox.create(opts())
    try {
      const program = await readFile(await compileExecLoop(dir))
      await sandbox.files.write('/tmp/exec-loop', new Blob([program]))
      await sandbox.commands.run('chmod +x /tmp/exec-loop')
      for (let copy = 0; copy < 8; copy++) {
        await sandbox.commands.run('/tmp/exec-loop', { background: true })
      }
      for (let round = 0; round < 10; round++) {
        expect(await sandbox.pause()).toBe(true)
        const resumed = await Sandbox.connect(sandbox.sandboxId, opts())
        expect((await resumed.commands.run('echo back')).stdout).toBe('back\n')
      }
    } finally {
      await sandbox.kill()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("gives each sandbox a boot ID of its own, not the host's, which its root cannot change", async () => {
    const sandboxes = await Promise.all([Sandbox.create(opts()), Sandbox.create(opts())])
    try {
      const [first, second] = await Promise.all(
        sandboxes.map((sandbox) => sandbox.files.read(BOOT_ID_FILE)),
      )
      expect(first).not.toBe(second)
      expect([first, second]).not.toContain(readFileSync(BOOT_ID_FILE, 'utf8'))
      const [sandbox] = sandboxes
      const write = await sandbox?.commands
        .run(`echo x | sudo tee ${BOOT_ID_FILE}`)
        .catch((error: unknown) => error)
      expect(write).toBeInstanceOf(CommandExitError)
      expect((write as CommandExitError).stderr).toContain('Permission denied')
      expect(await sandbox?.files.read(BOOT_ID_FILE)).toBe(first)
    } finally {
      await Promise.all(sandboxes.map((sandbox) => sandbox.kill()))
    }
  })
})
