import {
  FileNotFoundError,
  type FilesystemEvent,
  FilesystemEventType,
  InvalidArgumentError,
  type Sandbox,
} from 'e2b'
import { expect, vi } from 'vitest'
import { sandboxTest } from '../../setup.js'

type Opts = Parameters<Sandbox['files']['watchDir']>[2]

/** Watches `dir`, recording every event, and stops the watch when the test ends. */
async function record(sandbox: Sandbox, dir: string, opts: Opts = {}) {
  const events: FilesystemEvent[] = []
  const handle = await sandbox.files.watchDir(dir, (event) => void events.push(event), opts)
  const saw = async (name: string, type: FilesystemEventType): Promise<FilesystemEvent> => {
    await vi.waitFor(() => expect(events).toContainEqual(expect.objectContaining({ name, type })), {
      timeout: 10_000,
    })
    const found = events.find((event) => event.name === name && event.type === type)
    if (!found) throw new Error(`no ${type} event for ${name}`)
    return found
  }
  return { events, handle, saw }
}

sandboxTest('reports create, write, chmod, rename and remove', async ({ sandbox, testDir }) => {
  const { handle, saw, events } = await record(sandbox, testDir)
  try {
    await sandbox.files.write(`${testDir}/w.txt`, 'first')
    await saw('w.txt', FilesystemEventType.CREATE)
    await sandbox.files.write(`${testDir}/w.txt`, 'second, longer')
    await saw('w.txt', FilesystemEventType.WRITE)
    await sandbox.commands.run(`chmod 600 ${testDir}/w.txt`)
    await saw('w.txt', FilesystemEventType.CHMOD)
    await sandbox.files.rename(`${testDir}/w.txt`, `${testDir}/v.txt`)
    await saw('w.txt', FilesystemEventType.RENAME)
    await saw('v.txt', FilesystemEventType.CREATE)
    await sandbox.files.remove(`${testDir}/v.txt`)
    await saw('v.txt', FilesystemEventType.REMOVE)
    // Uploads land through a temporary file that a watcher never shows.
    expect(events.map((event) => event.name).sort()).toEqual(
      expect.arrayContaining(['v.txt', 'w.txt']),
    )
    expect(events.filter((event) => !['v.txt', 'w.txt'].includes(event.name))).toEqual([])
  } finally {
    await handle.stop()
  }
})

sandboxTest('a plain watch does not see inside subdirectories', async ({ sandbox, testDir }) => {
  await sandbox.files.makeDir(`${testDir}/sub`)
  const { handle, saw, events } = await record(sandbox, testDir)
  try {
    await sandbox.files.write(`${testDir}/sub/hidden.txt`, 'x')
    await sandbox.files.write(`${testDir}/visible.txt`, 'x')
    await saw('visible.txt', FilesystemEventType.CREATE)
    expect(events.filter((event) => event.name.startsWith('sub/'))).toEqual([])
  } finally {
    await handle.stop()
  }
})

sandboxTest('a recursive watch follows new subdirectories', async ({ sandbox, testDir }) => {
  const { handle, saw } = await record(sandbox, testDir, { recursive: true })
  try {
    await sandbox.files.makeDir(`${testDir}/nested`)
    await saw('nested', FilesystemEventType.CREATE)
    await sandbox.files.write(`${testDir}/nested/deep.txt`, 'one')
    await saw('nested/deep.txt', FilesystemEventType.CREATE)
    await sandbox.files.write(`${testDir}/nested/deep.txt`, 'two')
    await saw('nested/deep.txt', FilesystemEventType.WRITE)
  } finally {
    await handle.stop()
  }
})

sandboxTest('includeEntry attaches entry info to create events', async ({ sandbox, testDir }) => {
  const { handle, saw } = await record(sandbox, testDir, { includeEntry: true })
  try {
    await sandbox.files.makeDir(`${testDir}/with-entry`)
    const created = await saw('with-entry', FilesystemEventType.CREATE)
    expect(created.entry).toMatchObject({
      name: 'with-entry',
      type: 'dir',
      path: `${testDir}/with-entry`,
      owner: 'user',
    })
    await sandbox.files.remove(`${testDir}/with-entry`)
    const removed = await saw('with-entry', FilesystemEventType.REMOVE)
    expect(removed.entry).toBeUndefined()
  } finally {
    await handle.stop()
  }
})

sandboxTest('after stop() no more events arrive', async ({ sandbox, testDir }) => {
  const events: FilesystemEvent[] = []
  let exited = false
  const handle = await sandbox.files.watchDir(testDir, (event) => void events.push(event), {
    onExit: () => {
      exited = true
    },
  })
  await handle.stop()
  // e2b@2.51 hands onExit the client-side cancellation (a TimeoutError) after a user stop.
  await vi.waitFor(() => expect(exited).toBe(true))
  await sandbox.files.write(`${testDir}/after-stop.txt`, 'x')
  await new Promise((resolve) => setTimeout(resolve, 300))
  expect(events).toEqual([])
})

sandboxTest('watching a missing directory is a FileNotFoundError', async ({ sandbox, testDir }) => {
  await expect(sandbox.files.watchDir(`${testDir}/missing`, () => undefined)).rejects.toThrow(
    FileNotFoundError,
  )
})

sandboxTest('watching a file is an InvalidArgumentError', async ({ sandbox, testDir }) => {
  await sandbox.files.write(`${testDir}/file.txt`, 'x')
  await expect(sandbox.files.watchDir(`${testDir}/file.txt`, () => undefined)).rejects.toThrow(
    InvalidArgumentError,
  )
})
