import { mkdir, mkdtemp, realpath, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { DirWatcher } from '../../../../src/envd/fs/dir-watcher.js'
import type { ClassifiedEvent } from '../../../../src/envd/fs/watch-event-classifier.js'
import { EventType } from '../../../../src/envd/gen/filesystem/filesystem_pb.js'
import { eventually, inotifyWatchCount } from './inotify-watches.js'

let dir: string
let watcher: DirWatcher | undefined

beforeEach(async () => {
  dir = await realpath(await mkdtemp('/tmp/sbt-watch-'))
})

afterEach(async () => {
  watcher?.close()
  watcher = undefined
  await rm(dir, { recursive: true, force: true })
})

/** Starts a watcher that records `[relative path, type]` pairs. */
async function startRecording(recursive: boolean): Promise<Array<[string, string]>> {
  const seen: Array<[string, string]> = []
  watcher = await DirWatcher.start({
    root: dir,
    recursive,
    onEvents: async (events: ClassifiedEvent[]) => {
      for (const { path: p, type } of events) seen.push([path.relative(dir, p), EventType[type]])
    },
    onError: (error) => {
      throw error
    },
  })
  return seen
}

async function until(seen: Array<[string, string]>, ...wanted: Array<[string, string]>) {
  const done = () => wanted.every(([n, t]) => seen.some(([sn, st]) => sn === n && st === t))
  for (let attempt = 0; attempt < 200 && !done(); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  expect(seen).toEqual(expect.arrayContaining(wanted))
}

describe('DirWatcher', () => {
  test('holds one inotify watch per directory and releases all of them on close', async () => {
    await mkdir(path.join(dir, 'a/b'), { recursive: true })
    const baseline = await inotifyWatchCount()
    await startRecording(true)
    expect(await inotifyWatchCount()).toBe(baseline + 3)
    watcher?.close()
    expect(await eventually(inotifyWatchCount, baseline)).toBe(baseline)
  })

  test('a move between watched directories is RENAME then CREATE', async () => {
    await mkdir(path.join(dir, 'sub'))
    await writeFile(path.join(dir, 'f'), 'x')
    const seen = await startRecording(true)
    await rename(path.join(dir, 'f'), path.join(dir, 'sub/g'))
    await until(seen, ['f', 'RENAME'], ['sub/g', 'CREATE'])
    expect(seen.findIndex(([n]) => n === 'f')).toBeLessThan(seen.findIndex(([n]) => n === 'sub/g'))
  })

  test('mkdir -p under a recursive watch reports every new level', async () => {
    const seen = await startRecording(true)
    await mkdir(path.join(dir, 'x/y/z'), { recursive: true })
    await until(seen, ['x', 'CREATE'], ['x/y', 'CREATE'], ['x/y/z', 'CREATE'])
  })

  test('removing a watched subdirectory reports its entries and drops its watch', async () => {
    await mkdir(path.join(dir, 'gone'))
    await writeFile(path.join(dir, 'gone/f'), 'x')
    const baseline = await inotifyWatchCount()
    const seen = await startRecording(true)
    await rm(path.join(dir, 'gone'), { recursive: true })
    await until(seen, ['gone/f', 'REMOVE'], ['gone', 'REMOVE'])
    expect(await eventually(inotifyWatchCount, baseline + 1)).toBe(baseline + 1)
    expect(seen.filter(([n]) => n === 'gone/gone')).toEqual([])
  })

  test('fails to start on a missing directory without leaking a watch', async () => {
    const baseline = await inotifyWatchCount()
    await expect(
      DirWatcher.start({
        root: path.join(dir, 'missing'),
        recursive: true,
        onEvents: async () => undefined,
        onError: () => undefined,
      }),
    ).rejects.toMatchObject({ code: 'ENOENT' })
    expect(await inotifyWatchCount()).toBe(baseline)
  })
})
