import { randomBytes } from 'node:crypto'
import { Sandbox, SandboxError, SandboxNotFoundError, type SnapshotListOpts } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryServerAnswer, startMemoryServer } from '../support/memory-server.js'
import { callApi } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// Issue 14: persistent snapshots (POST /sandboxes/{id}/snapshots, GET /snapshots, DELETE
// /templates/{snapshotID}) and forks (POST /sandboxes/{id}/fork) through the SDK: a running
// sandbox checkpointed in place, and new sandboxes started from it with its files and its
// processes as they were.

let serve: ServeInstance
const opts = () => ({ ...serve.client, timeoutMs: 300_000 })

beforeAll(async () => {
  serve = await startServe()
})

afterAll(async () => {
  expect(await serve?.stop()).toEqual([])
})

/** A sandbox running the memory server, and the secret it drew; the server has two hits. */
async function sandboxWithServer(): Promise<{ sandbox: Sandbox; secret: string }> {
  const sandbox = await Sandbox.create(opts())
  return { sandbox, secret: await startMemoryServer(sandbox) }
}

/** The IDs of the first page of `Sandbox.listSnapshots` with these filters. */
async function listedIDs(filters: Pick<SnapshotListOpts, 'sandboxId' | 'name'> = {}) {
  const snapshots = await Sandbox.listSnapshots({ ...opts(), ...filters }).nextItems()
  return snapshots.map((snapshot) => snapshot.snapshotId)
}

/** The error a call rejects with; fails the test if it resolves. */
async function rejection(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (value) => {
      throw new Error(`expected a rejection, got ${String(value)}`)
    },
    (error: unknown) => error,
  )
}

/** The kernel's ID of the boot the sandbox's processes run in. */
const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id'

describe('snapshots', () => {
  it('starts sandboxes from a snapshot with its files and its processes, memory and all', async () => {
    const { sandbox: source, secret } = await sandboxWithServer()
    try {
      await source.files.write('/home/user/notes.txt', 'before the snapshot')
      const bootID = await source.files.read(BOOT_ID_FILE)
      const snapshot = await source.createSnapshot()
      expect(snapshot.names).toEqual([])
      expect(snapshot.snapshotId).toMatch(/^[a-z0-9]{20}:default$/)

      const restored = await Sandbox.create(snapshot.snapshotId, opts())
      try {
        expect(restored.sandboxId).not.toBe(source.sandboxId)
        expect(await restored.files.read('/home/user/notes.txt')).toBe('before the snapshot')
        // The server runs on in the new sandbox with the memory it had: its secret, two hits.
        expect(await memoryServerAnswer(restored)).toBe(`${secret} 3`)
        // In the boot it ran in, as in a VM restored from its memory.
        expect(await restored.files.read(BOOT_ID_FILE)).toBe(bootID)
        // From here each counts its own.
        expect(await memoryServerAnswer(source)).toBe(`${secret} 3`)
        expect(await memoryServerAnswer(restored)).toBe(`${secret} 4`)
        await restored.files.write('/home/user/notes.txt', 'written after')
        expect(await source.files.read('/home/user/notes.txt')).toBe('before the snapshot')
        expect(await restored.commands.run('echo $((6 * 7))')).toMatchObject({
          exitCode: 0,
          stdout: '42\n',
        })
      } finally {
        await restored.kill()
      }
      // The snapshot outlives its source, whose files are gone with it.
      await source.kill()
      const later = await Sandbox.create(snapshot.snapshotId, opts())
      try {
        expect(await memoryServerAnswer(later)).toBe(`${secret} 3`)
        expect(await later.files.read(BOOT_ID_FILE)).toBe(bootID)
      } finally {
        await later.kill()
      }
      expect(await Sandbox.deleteSnapshot(snapshot.snapshotId, opts())).toBe(true)
    } finally {
      await source.kill()
    }
  })

  it('names, lists and deletes snapshots as the SDK asks', async () => {
    const source = await Sandbox.create(opts())
    const other = await Sandbox.create(opts())
    try {
      await source.files.write('/home/user/notes.txt', 'named')
      const unnamed = await source.createSnapshot()
      const name = `snap-${randomBytes(4).toString('hex')}`
      const named = await Sandbox.createSnapshot(source.sandboxId, { ...opts(), name })
      expect(named.names).toHaveLength(1)
      expect(named.names[0]).toMatch(new RegExp(`^[a-z0-9_-]+/${name}$`))
      expect(named.snapshotId).toBe(`${named.names[0]}:default`)

      expect(await listedIDs()).toEqual(
        expect.arrayContaining([unnamed.snapshotId, named.snapshotId]),
      )
      const ofSource = await source.listSnapshots().nextItems()
      expect(ofSource.map((snapshot) => snapshot.snapshotId).sort()).toEqual(
        [unnamed.snapshotId, named.snapshotId].sort(),
      )
      expect(await listedIDs({ sandboxId: other.sandboxId })).toEqual([])
      expect(await listedIDs({ name })).toEqual([named.snapshotId])
      expect(await listedIDs({ name: `${name}-does-not-exist` })).toEqual([])

      const fromNamed = await Sandbox.create(named.snapshotId, opts())
      expect(await fromNamed.files.read('/home/user/notes.txt')).toBe('named')
      await fromNamed.kill()

      for (const { snapshotId } of [unnamed, named]) {
        expect(await Sandbox.deleteSnapshot(snapshotId, opts())).toBe(true)
        expect(await Sandbox.deleteSnapshot(snapshotId, opts())).toBe(false)
        const refused = await rejection(Sandbox.create(snapshotId, opts()))
        expect(refused).toBeInstanceOf(SandboxError)
        expect(refused).toMatchObject({
          statusCode: 404,
          message: `404: template '${snapshotId.replace(/:default$/, '')}' not found`,
        })
      }
      expect(await listedIDs({ sandboxId: source.sandboxId })).toEqual([])
    } finally {
      await Promise.all([source.kill(), other.kill()])
    }
  })
})

describe('fork', () => {
  it('forks a sandbox into independent sandboxes with its files, the source running on', async () => {
    const { sandbox: source, secret } = await sandboxWithServer()
    try {
      await source.files.write('/home/user/state.txt', 'state before fork')
      const forks = await source.fork({ count: 3, timeoutMs: 120_000 })
      const started = forks.filter((fork): fork is Sandbox => fork instanceof Sandbox)
      try {
        expect(started).toHaveLength(3)
        const [a, ...others] = started
        if (a === undefined) throw new Error('three forks expected')
        // Each its own ID and envd token.
        const all = [source, ...started]
        expect(new Set(all.map((sandbox) => sandbox.sandboxId)).size).toBe(4)
        const tokens = await Promise.all(
          all.map(
            async (sandbox) =>
              (await callApi(serve.client, 'GET', `/sandboxes/${sandbox.sandboxId}`)).body
                .envdAccessToken,
          ),
        )
        expect(new Set(tokens).size).toBe(4)
        for (const fork of started) {
          expect(await fork.files.read('/home/user/state.txt')).toBe('state before fork')
          expect(await memoryServerAnswer(fork)).toBe(`${secret} 3`)
          expect(await fork.isRunning()).toBe(true)
        }
        await a.files.write('/home/user/state.txt', 'written in a fork')
        for (const other of [...others, source]) {
          expect(await other.files.read('/home/user/state.txt')).toBe('state before fork')
        }
        expect(await source.isRunning()).toBe(true)
        expect(await memoryServerAnswer(source)).toBe(`${secret} 3`)
        // A fork leaves no snapshot behind.
        expect(await listedIDs({ sandboxId: source.sandboxId })).toEqual([])
      } finally {
        await Promise.all(started.map((fork) => fork.kill()))
      }
    } finally {
      await source.kill()
    }
  })

  it('refuses a count over 100, and a killed sandbox as not found', async () => {
    const sandbox = await Sandbox.create(opts())
    const tooMany = await rejection(sandbox.fork({ count: 101 }))
    expect(tooMany).toBeInstanceOf(SandboxError)
    expect(tooMany).toMatchObject({ message: '400: Count cannot be greater than 100' })
    await sandbox.kill()
    expect(await rejection(sandbox.fork())).toBeInstanceOf(SandboxNotFoundError)
  })
})
