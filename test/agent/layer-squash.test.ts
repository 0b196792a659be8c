import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HostLayerStore } from '../../src/agent/rootfs/layer-store.js'
import { mountsUnder } from '../../src/agent/rootfs/mountinfo.js'

// A squash reads its stack through a temporary overlay mount in the layer directory. Anything
// on the host may walk that directory meanwhile (a backup, a file indexer, a guest machine's
// view of the host's files) and hold the mount: the squash must still finish and leave no
// mount behind.

const logger = pino({ level: process.env.SANDBAR_LOG_LEVEL ?? 'silent' })

let scratch = ''
let store: HostLayerStore
let holder: ChildProcess | undefined

beforeAll(async () => {
  scratch = await mkdtemp('/tmp/sbt-squash-')
  store = new HostLayerStore(scratch, async () => new Set(), logger)
  await store.open()
})

afterAll(async () => {
  if (holder?.pid !== undefined && holder.exitCode === null) {
    holder.kill('SIGKILL')
    await once(holder, 'exit')
  }
  if (scratch === '') return
  expect(await mountsUnder(scratch)).toEqual([])
  await rm(scratch, { recursive: true, force: true })
})

describe('squashing layers', () => {
  it('finishes while another process holds its overlay, and leaves no mount', async () => {
    await store.add('lower-00', async (dir) => {
      await mkdir(path.join(dir, 'held'))
      // Enough files that copying them outlasts the holder's next look at the directory.
      await mkdir(path.join(dir, 'many'))
      for (let index = 0; index < 2000; index++) {
        await writeFile(path.join(dir, 'many', `${index}`), `${index}\n`)
      }
      await writeFile(path.join(dir, 'replaced'), 'old\n')
    })
    await store.add('upper-00', async (dir) => {
      await writeFile(path.join(dir, 'replaced'), 'new\n')
    })
    // Waits for the squash's overlay and stays inside it, as a reader walking the directory
    // would while the copy runs.
    holder = spawn(
      'sh',
      [
        '-c',
        'while :; do for d in "$1"/.adding-*-merged-*/held; do cd "$d" 2>/dev/null && exec sleep 60; done; done',
        'sh',
        scratch,
      ],
      { stdio: 'ignore' },
    )

    await store.squash(['lower-00', 'upper-00'], 'squashed-00')

    // The holder did get in: its working directory is the overlay's `held`.
    expect(path.basename(await readlink(`/proc/${holder.pid}/cwd`))).toBe('held')
    const squashed = store.path('squashed-00')
    expect(await readFile(path.join(squashed, 'replaced'), 'utf8')).toBe('new\n')
    expect(await readdir(path.join(squashed, 'many'))).toHaveLength(2000)
    expect(await mountsUnder(scratch)).toEqual([])
    expect((await readdir(scratch)).sort()).toEqual(['lower-00', 'squashed-00', 'upper-00'])
  })
})
