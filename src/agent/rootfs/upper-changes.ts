import { type FileHandle, lstat, open, readdir, readlink } from 'node:fs/promises'
import path from 'node:path'
import { getAttribute } from 'fs-xattr'
import { type Pack, pack } from 'tar-stream'
import { at, DIRECTORY_FLAGS, ENTRY_READ_FLAGS, handlePath } from '../volumes/dir-handles.js'

/** What a sandbox changed at one path against its template (overlayfs's upper layer). */
export interface UpperChange {
  /** Absolute inside the sandbox. */
  path: string
  kind: 'added' | 'modified' | 'deleted'
  type: 'file' | 'directory' | 'symlink' | 'other'
}

/** Where a change's entry is: its open parent directory and its name there. */
interface EntrySource {
  dir: FileHandle
  name: string
}

/** The content of an entry that has none: without one, tar-stream waits for it. */
const EMPTY = Buffer.alloc(0)

/** The xattr overlayfs sets on a directory that hides what the lower layers hold under it. */
const OPAQUE_XATTRS = ['trusted.overlay.opaque', 'user.overlay.opaque']

/**
 * The changes in `upper` against the template's `layers` (lowest first), in path order. A
 * whiteout (a 0:0 character device) is a deletion; an entry the lower layers do not show is
 * added, one they show is modified. A directory is listed when added or replaced (opaque);
 * one only walked through to a change below it is not.
 */
export async function upperChanges(
  upper: string,
  layers: readonly string[],
): Promise<UpperChange[]> {
  const changes: UpperChange[] = []
  await walkChanges(upper, layers, async (change) => {
    changes.push(change)
  })
  return changes
}

/**
 * Walks the upper layer, which the sandbox writes while this reads it, through directory
 * descriptors (dir-handles.ts): a directory or file swapped for a symlink mid-walk is never
 * followed, so nothing outside the layer is listed or read.
 */
async function walkChanges(
  upper: string,
  layers: readonly string[],
  onChange: (change: UpperChange, source: EntrySource) => Promise<void>,
): Promise<void> {
  const visit = async (dir: FileHandle, relative: string, underNew: boolean) => {
    for (const name of (await readdir(handlePath(dir))).sort()) {
      const entry = path.join(relative, name)
      const stats = await lstat(at(dir, name)).catch(() => undefined)
      if (stats === undefined) continue
      const source = { dir, name }
      const inside = `/${entry}`
      if (stats.isCharacterDevice() && stats.rdev === 0) {
        await onChange({ path: inside, kind: 'deleted', type: 'other' }, source)
        continue
      }
      const existed = !underNew && (await lowerShows(layers, entry))
      if (!stats.isDirectory()) {
        await onChange(
          { path: inside, kind: existed ? 'modified' : 'added', type: typeOf(stats) },
          source,
        )
        continue
      }
      // Replaced by a symlink since: not entered.
      const child = await open(at(dir, name), DIRECTORY_FLAGS).catch(() => undefined)
      if (child === undefined) continue
      try {
        const opaque = await isOpaque(handlePath(child))
        if (!existed) await onChange({ path: inside, kind: 'added', type: 'directory' }, source)
        else if (opaque)
          await onChange({ path: inside, kind: 'modified', type: 'directory' }, source)
        await visit(child, entry, !existed || opaque)
      } finally {
        await child.close()
      }
    }
  }
  const root = await open(upper, DIRECTORY_FLAGS)
  try {
    await visit(root, '', false)
  } finally {
    await root.close()
  }
}

/** Whether the stack of `layers` shows `entry`: the highest layer holding it decides. */
async function lowerShows(layers: readonly string[], entry: string): Promise<boolean> {
  for (const layer of [...layers].reverse()) {
    const stats = await lstat(path.join(layer, entry)).catch(() => undefined)
    if (stats === undefined) continue
    return !(stats.isCharacterDevice() && stats.rdev === 0)
  }
  return false
}

async function isOpaque(dir: string): Promise<boolean> {
  for (const name of OPAQUE_XATTRS) {
    const value = await getAttribute(dir, name).catch(() => undefined)
    if (value?.toString() === 'y') return true
  }
  return false
}

function typeOf(stats: { isFile(): boolean; isSymbolicLink(): boolean }): UpperChange['type'] {
  if (stats.isFile()) return 'file'
  if (stats.isSymbolicLink()) return 'symlink'
  return 'other'
}

/**
 * The changes as a tar stream in OCI's layer form: added and modified files, directories and
 * symlinks with the sandbox's own owners (host ID `idMap.hostID + n` → `n`), deletions as
 * `.wh.<name>` entries and replaced directories with `.wh..wh..opq`, so it applies onto the
 * template as an image layer would. Files are opened without following symlinks and read only
 * when they are regular files.
 */
export function upperChangesArchive(
  upper: string,
  layers: readonly string[],
  idMap: { hostID: number; size: number },
): AsyncIterable<Uint8Array> {
  const archive = pack()
  const own = (id: number) =>
    id >= idMap.hostID && id < idMap.hostID + idMap.size ? id - idMap.hostID : 65534
  const write = async (change: UpperChange, { dir, name: base }: EntrySource) => {
    const name = change.path.slice(1)
    if (change.kind === 'deleted') {
      archive.entry({ name: path.join(path.dirname(name), `.wh.${base}`) }, EMPTY)
      return
    }
    const stats = await lstat(at(dir, base)).catch(() => undefined)
    if (stats === undefined) return
    const header = {
      name,
      mode: stats.mode & 0o7777,
      uid: own(stats.uid),
      gid: own(stats.gid),
      mtime: stats.mtime,
    }
    if (stats.isDirectory()) {
      archive.entry({ ...header, type: 'directory' })
      if (change.kind === 'modified') archive.entry({ name: `${name}/.wh..wh..opq` }, EMPTY)
    } else if (stats.isSymbolicLink()) {
      const linkname = await readlink(at(dir, base)).catch(() => undefined)
      if (linkname !== undefined) archive.entry({ ...header, type: 'symlink', linkname })
    } else if (stats.isFile()) {
      await addFile(archive, header, dir, base)
    }
  }
  walkChanges(upper, layers, write).then(
    () => archive.finalize(),
    (error: unknown) => archive.destroy(error as Error),
  )
  // A client that goes away destroys the stream mid-write: not an error of the service's.
  archive.on('error', () => undefined)
  return archive as AsyncIterable<Uint8Array>
}

/** Adds the regular file `name` of `dir`, as it is when opened (never through a symlink). */
async function addFile(
  archive: Pack,
  header: { name: string; mode: number; uid: number; gid: number; mtime: Date },
  dir: FileHandle,
  name: string,
): Promise<void> {
  const file = await open(at(dir, name), ENTRY_READ_FLAGS).catch(() => undefined)
  if (file === undefined) return
  try {
    const stats = await file.stat()
    if (!stats.isFile()) return
    if (stats.size === 0) {
      archive.entry({ ...header, size: 0 }, EMPTY)
      return
    }
    let written: (error?: Error | null) => void = () => undefined
    // Settles when the entry is complete, or fails when the archive goes (its client did).
    const done = new Promise<void>((resolve, reject) => {
      written = (error) => (error ? reject(error) : resolve())
    })
    // The archive may go while this awaits the file rather than `done`: that failure is
    // awaited below, and must not count as unhandled meanwhile (it would end the service).
    done.catch(() => undefined)
    const entry = archive.entry({ ...header, size: stats.size }, written)
    entry.on('error', written)
    // tar-stream's entries are streamx streams, which node's pipe() does not drive. The size
    // is the one in the header: a file that grows meanwhile is cut there, one that shrinks
    // fails the archive.
    let left = stats.size
    for await (const chunk of file.createReadStream({
      autoClose: false,
      end: Math.max(0, stats.size - 1),
    })) {
      const bytes = chunk as Buffer
      left -= bytes.length
      if (entry.write(bytes)) continue
      await Promise.race([
        new Promise<void>((resolve) => entry.once('drain', () => resolve())),
        done,
      ])
    }
    if (left > 0) throw new Error(`${header.name} shrank while it was archived`)
    entry.end(EMPTY)
    await done
  } finally {
    await file.close()
  }
}
