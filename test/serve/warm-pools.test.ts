import { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  adoptedSandboxIDs,
  pooledSandboxIDs,
  type ServeInstance,
  startServe,
} from './serve-fixture.js'

// `base` sandboxes started ahead of their creates (issue 13, warm pools), through the SDK: a
// pooled sandbox is the client's own, indistinguishable from a cold one, and a crash of the
// service leaves none behind.

let serve: ServeInstance
const opts = () => ({ ...serve.client })

beforeAll(async () => {
  serve = await startServe(['--warm-pool', 'base=2'])
})

afterAll(async () => {
  const leaks = await serve?.stop()
  expect(leaks).toEqual([])
})

describe('base warm pool', () => {
  it('hands each create its own started sandbox, with its settings and nothing of another', async () => {
    await expect.poll(() => pooledSandboxIDs(serve.output()).length, { timeout: 30_000 }).toBe(2)
    const pooled = pooledSandboxIDs(serve.output())
    const first = await Sandbox.create({ ...opts(), envs: { WHO: 'first' }, secure: true })
    const second = await Sandbox.create({ ...opts(), envs: { WHO: 'second' } })
    try {
      expect(pooled).toContain(first.sandboxId)
      expect(pooled).toContain(second.sandboxId)
      expect((await first.commands.run('echo "$WHO $(whoami) $PWD"')).stdout).toBe(
        'first user /home/user\n',
      )
      await first.files.write('/home/user/mine.txt', 'first')
      const theOther = await second.commands.run('echo $WHO; ls /home/user/mine.txt || true')
      expect(theOther.stdout).toBe('second\n')
      const listed = await Sandbox.list(opts()).nextItems()
      expect(listed.map((info) => info.sandboxId).sort()).toEqual(
        [first.sandboxId, second.sandboxId].sort(),
      )
    } finally {
      await first.kill()
      await second.kill()
    }
    // The pool starts the next ones.
    await expect.poll(() => pooledSandboxIDs(serve.output()).length, { timeout: 30_000 }).toBe(4)
  })

  it('adopts its pooled sandboxes again when the service is killed and restarted', async () => {
    const before = pooledSandboxIDs(serve.output()).slice(-2)
    await serve.crashAndRestart()
    // The members the killed service left are on no list, and no client's: the restart keeps
    // them for the pool instead of starting new ones.
    const reconciled = serve
      .output()
      .split('\n')
      .filter((line) => line.includes('reconciled the store with the agent'))
      .map((line) => JSON.parse(line) as { unlisted: number; waiting: number })
    expect(reconciled).toEqual([expect.objectContaining({ unlisted: 0, waiting: 2 })])
    await expect.poll(() => adoptedSandboxIDs(serve.output()).sort()).toEqual([...before].sort())
    expect(pooledSandboxIDs(serve.output())).toEqual([])
    const sandbox = await Sandbox.create({ ...opts(), envs: { WHO: 'after restart' } })
    try {
      expect(before).toContain(sandbox.sandboxId)
      expect((await sandbox.commands.run('echo $WHO')).stdout).toBe('after restart\n')
    } finally {
      await sandbox.kill()
    }
  })
})
