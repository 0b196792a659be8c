import { createReadStream } from 'node:fs'
import { lstat, readdir, readlink } from 'node:fs/promises'
import path from 'node:path'
import { getAttribute } from 'fs-xattr'
import { pack } from 'tar-stream'

/** What a sandbox changed at one path against its template (overlayfs's upper layer). */
export interface UpperChange {
  /** Absolute inside the sandbox. */
  path: string
  kind: 'added' | 'modified' | 'deleted'
  type: 'file' | 'directory' | 'symlink' | 'other'
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
  const visit = async (relative: string, underNew: boolean): Promise<void> => {
    const names = (await readdir(path.join(upper, relative))).sort()
    for (const name of names) {
      const entry = path.join(relative, name)
      const stats = await lstat(path.join(upper, entry))
      const inside = `/${entry}`
      if (stats.isCharacterDevice() && stats.rdev === 0) {
        changes.push({ path: inside, kind: 'deleted', type: 'other' })
        continue
      }
      const existed = !underNew && (await lowerShows(layers, entry))
      if (stats.isDirectory()) {
        const opaque = await isOpaque(path.join(upper, entry))
        if (!existed) changes.push({ path: inside, kind: 'added', type: 'directory' })
        else if (opaque) changes.push({ path: inside, kind: 'modified', type: 'directory' })
        await visit(entry, !existed || opaque)
        continue
      }
      changes.push({ path: inside, kind: existed ? 'modified' : 'added', type: typeOf(stats) })
    }
  }
  await visit('', false)
  return changes
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
 * template as an image layer would.
 */
export function upperChangesArchive(
  upper: string,
  changes: readonly UpperChange[],
  idMap: { hostID: number; size: number },
): AsyncIterable<Uint8Array> {
  const archive = pack()
  const own = (id: number) =>
    id >= idMap.hostID && id < idMap.hostID + idMap.size ? id - idMap.hostID : 65534
  const write = async () => {
    for (const change of changes) {
      const name = change.path.slice(1)
      if (change.kind === 'deleted') {
        const whiteout = path.join(path.dirname(name), `.wh.${path.basename(name)}`)
        archive.entry({ name: whiteout }, EMPTY)
        continue
      }
      const file = path.join(upper, name)
      const stats = await lstat(file)
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
        archive.entry({ ...header, type: 'symlink', linkname: await readlink(file) })
      } else if (stats.isFile()) {
        let written: (error?: Error | null) => void = () => undefined
        // Settles when the entry is complete, or fails when the archive goes (its client did).
        const done = new Promise<void>((resolve, reject) => {
          written = (error) => (error ? reject(error) : resolve())
        })
        const entry = archive.entry({ ...header, size: stats.size }, written)
        entry.on('error', written)
        // tar-stream's entries are streamx streams, which node's pipe() does not drive.
        for await (const chunk of createReadStream(file)) {
          if (entry.write(chunk)) continue
          await Promise.race([
            new Promise<void>((resolve) => entry.once('drain', () => resolve())),
            done,
          ])
        }
        entry.end(EMPTY)
        await done
      }
    }
    archive.finalize()
  }
  write().catch((error: unknown) => archive.destroy(error as Error))
  // A client that goes away destroys the stream mid-write: not an error of the service's.
  archive.on('error', () => undefined)
  return archive as AsyncIterable<Uint8Array>
}
