import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Code, ConnectError } from '@connectrpc/connect'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  EventType,
  type FilesystemEvent,
  FileType,
  type WatchDirResponse,
} from '../../../../src/envd/gen/filesystem/filesystem_pb.js'
import { eventually, inotifyWatchCount } from '../fs/inotify-watches.js'
import { createTestFilesystem, type FilesystemClient } from './filesystem-client.js'

let client: FilesystemClient
let dir: string
let dispose: () => Promise<void>
let abort: AbortController

beforeEach(async () => {
  ;({ client, dir, dispose } = await createTestFilesystem())
  abort = new AbortController()
})

afterEach(async () => {
  abort.abort()
  await dispose()
})

type Seen = [string, string]

function typed(event: FilesystemEvent): Seen {
  return [event.name, EventType[event.type]]
}

/** Opens a WatchDir stream and returns its iterator, once the `start` message arrived. */
async function watch(
  request: { path: string; recursive?: boolean; includeEntry?: boolean },
  headers: Record<string, string> = {},
): Promise<AsyncIterator<WatchDirResponse>> {
  const stream = client.watchDir(request, { signal: abort.signal, headers })
  const iterator = stream[Symbol.asyncIterator]()
  const first = await iterator.next()
  expect(first.done ? undefined : first.value.event.case).toBe('start')
  return iterator
}

/** Reads filesystem events until `until` holds for everything seen so far. */
async function collect(
  iterator: AsyncIterator<WatchDirResponse>,
  until: (seen: FilesystemEvent[]) => boolean,
): Promise<FilesystemEvent[]> {
  const seen: FilesystemEvent[] = []
  while (!until(seen)) {
    const next = await iterator.next()
    if (next.done) break
    if (next.value.event.case === 'filesystem') seen.push(next.value.event.value)
  }
  return seen
}

const has =
  (...wanted: Seen[]) =>
  (seen: FilesystemEvent[]): boolean =>
    wanted.every(([name, type]) => seen.some((e) => e.name === name && EventType[e.type] === type))

describe('WatchDir', () => {
  test('reports create, write, chmod, rename and remove with names relative to the dir', async () => {
    const events = await watch({ path: dir })
    await writeFile(path.join(dir, 'a.txt'), 'one')
    expect((await collect(events, has(['a.txt', 'CREATE']))).map(typed)).toContainEqual([
      'a.txt',
      'CREATE',
    ])
    await writeFile(path.join(dir, 'a.txt'), 'two, longer')
    await collect(events, has(['a.txt', 'WRITE']))
    await chmod(path.join(dir, 'a.txt'), 0o600)
    await collect(events, has(['a.txt', 'CHMOD']))
    await rename(path.join(dir, 'a.txt'), path.join(dir, 'b.txt'))
    const moved = await collect(events, has(['a.txt', 'RENAME'], ['b.txt', 'CREATE']))
    const order = moved.map((event) => typed(event).join(' '))
    expect(order.indexOf('a.txt RENAME')).toBeLessThan(order.indexOf('b.txt CREATE'))
    await rm(path.join(dir, 'b.txt'))
    await collect(events, has(['b.txt', 'REMOVE']))
  })

  test('a non-recursive watch ignores subdirectories', async () => {
    await mkdir(path.join(dir, 'sub'))
    const events = await watch({ path: dir })
    await writeFile(path.join(dir, 'sub/inner.txt'), 'x')
    await writeFile(path.join(dir, 'marker'), 'x')
    const seen = await collect(events, has(['marker', 'CREATE']))
    expect(seen.map((e) => e.name)).not.toContain('sub/inner.txt')
  })

  test('a recursive watch follows directories created after it started', async () => {
    const events = await watch({ path: dir, recursive: true })
    await mkdir(path.join(dir, 'new'))
    await collect(events, has(['new', 'CREATE']))
    await writeFile(path.join(dir, 'new/file.txt'), 'x')
    await collect(events, has(['new/file.txt', 'CREATE']))
    await writeFile(path.join(dir, 'new/file.txt'), 'xyz')
    await collect(events, has(['new/file.txt', 'WRITE']))
  })

  test('include_entry attaches the entry to create and write events only', async () => {
    const events = await watch({ path: dir, includeEntry: true })
    await writeFile(path.join(dir, 'e.txt'), 'entry')
    const created = await collect(events, has(['e.txt', 'CREATE']))
    const create = created.find((e) => e.type === EventType.CREATE)
    expect(create?.entry).toMatchObject({
      name: 'e.txt',
      type: FileType.FILE,
      path: `${dir}/e.txt`,
    })
    await rm(path.join(dir, 'e.txt'))
    const removed = await collect(events, has(['e.txt', 'REMOVE']))
    expect(removed.find((e) => e.type === EventType.REMOVE)?.entry).toBeUndefined()
  })

  test('sends keepalive after the Keepalive-Ping-Interval without events', async () => {
    const events = await watch({ path: dir }, { 'keepalive-ping-interval': '0.1' })
    const next = await events.next()
    expect(next.done ? undefined : next.value.event.case).toBe('keepalive')
  })

  test('releases every inotify watch when the client goes away', async () => {
    await mkdir(path.join(dir, 'a/b'), { recursive: true })
    const baseline = await inotifyWatchCount()
    const events = await watch({ path: dir, recursive: true })
    expect(await inotifyWatchCount()).toBe(baseline + 3)
    const pending = events.next().catch(() => undefined)
    abort.abort()
    await pending
    expect(await eventually(inotifyWatchCount, baseline)).toBe(baseline)
  })

  test('refuses a missing path and a file', async () => {
    await writeFile(path.join(dir, 'file'), '')
    for (const [target, code] of [
      ['missing', Code.NotFound],
      ['file', Code.InvalidArgument],
    ] as const) {
      const error = await watch({ path: target }).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(ConnectError)
      expect(error instanceof ConnectError ? error.code : undefined).toBe(code)
    }
  })
})

describe('polling watchers', () => {
  async function poll(watcherId: string, until: (seen: FilesystemEvent[]) => boolean) {
    const seen: FilesystemEvent[] = []
    for (let attempt = 0; attempt < 100 && !until(seen); attempt++) {
      seen.push(...(await client.getWatcherEvents({ watcherId })).events)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return seen
  }

  test('buffer events until polled, and are gone once removed', async () => {
    const { watcherId } = await client.createWatcher({ path: dir, recursive: true })
    expect(watcherId).toMatch(/^[0-9a-f-]{36}$/)
    await mkdir(path.join(dir, 'sub'))
    await writeFile(path.join(dir, 'sub/f'), 'x')
    const seen = await poll(watcherId, has(['sub', 'CREATE'], ['sub/f', 'CREATE']))
    expect(seen.map(typed)).toEqual(
      expect.arrayContaining([
        ['sub', 'CREATE'],
        ['sub/f', 'CREATE'],
      ]),
    )
    // Each poll drains the buffer: later polls never repeat what an earlier one returned.
    await new Promise((resolve) => setTimeout(resolve, 50))
    seen.push(...(await client.getWatcherEvents({ watcherId })).events)
    expect(seen.filter((e) => e.name === 'sub' && e.type === EventType.CREATE)).toHaveLength(1)
    await client.removeWatcher({ watcherId })
    const error = await client.getWatcherEvents({ watcherId }).catch((e: unknown) => e)
    expect(error instanceof ConnectError ? error.code : undefined).toBe(Code.NotFound)
  })

  test('removing a watcher releases its inotify watches', async () => {
    const baseline = await inotifyWatchCount()
    const { watcherId } = await client.createWatcher({ path: dir })
    expect(await inotifyWatchCount()).toBe(baseline + 1)
    await client.removeWatcher({ watcherId })
    expect(await eventually(inotifyWatchCount, baseline)).toBe(baseline)
  })

  test('an unknown watcher is not_found', async () => {
    const error = await client.removeWatcher({ watcherId: 'nope' }).catch((e: unknown) => e)
    expect(error instanceof ConnectError ? error.code : undefined).toBe(Code.NotFound)
  })
})
