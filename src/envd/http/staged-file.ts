import { randomBytes } from 'node:crypto'
import {
  closeSync,
  createWriteStream,
  fchmodSync,
  constants as fsConstants,
  openSync,
  realpathSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { errnoCode } from '../../errno-code.js'
import { deniedAs } from '../fs/access-check.js'
import { asUser, type Credentials } from '../fs/as-user.js'
import { makeDirs, removeDirs } from '../fs/make-dirs.js'
import { createFile, entryExists, holdDirectory, mayCreateAsRoot, ROOT } from '../fs/root-create.js'
import { UPLOAD_STAGING_PREFIX } from '../fs/upload-staging.js'
import { replaceMetadata } from '../fs/xattr-metadata.js'
import type { OsUser } from '../users.js'
import { httpErrorFromFsError } from './file-errors.js'
import { HttpError } from './http-error.js'

/**
 * How much of an upload may wait in memory for the disk. Socket reads arrive in 16-64 KiB
 * chunks; with room to queue, the write stream hands them to the disk as one `writev` while
 * the previous write runs, instead of one thread-pool round trip per chunk.
 */
const WRITE_BUFFER_BYTES = 4 * 1024 * 1024

/**
 * Files up to this size are gathered in memory and written in one synchronous call. Most
 * uploads are this small, and for them the write stream's thread-pool round trips, its
 * set-up and its close cost more than the write itself (0.4 ms of envd's CPU per 5-byte file).
 */
const SMALL_FILE_BYTES = 64 * 1024

/** A file written beside its destination, not yet visible there. */
export interface StagedFile {
  /** Moves the file into place, replacing whatever was there. */
  commit(): void
  /** Removes the file and the directories staging created. */
  discard(): void
}

/**
 * Streams `content` into a temporary file in the destination's directory, owned by `user`,
 * with `metadata` as its `user.e2b.*` xattrs. Until `commit()` nothing is visible at `target`,
 * so a failed upload leaves no partial file (wire contract §3.3 overwrite semantics).
 * Overwriting keeps the old file's permission bits (set-id bits drop, as they do when root
 * chowns a file); a new file is `0644`, as envd's `0666 &^ umask`.
 * A symlink at `target` is followed, as `open(2)` would.
 *
 * Every path-based step runs with the user's credentials (`asUser`), so the kernel decides
 * each: the user must be able to write an existing file, along a path the user may search.
 * Where the kernel denies the user only creating the file or its parents, root creates them
 * for the user as E2B's envd does, never through a symlink (`openStagingAsRoot`). The bytes
 * stream through the open descriptor.
 */
export async function stageFile(
  target: string,
  user: OsUser,
  content: Readable,
  metadata: Record<string, string>,
): Promise<StagedFile> {
  const staging = openStaging(target, user)
  const { temp, destination, createdDirs, actor } = staging
  const discard = (): void => {
    asUser(actor, () => {
      try {
        unlinkSync(temp)
      } catch {
        // Already gone.
      }
      removeDirs(createdDirs)
    })
    staging.release()
  }
  try {
    await writeContent(content, staging.fd)
    asUser(actor, () => storeMetadata(staging.content, metadata, target))
  } catch (error) {
    content.destroy()
    discard()
    throw error
  }
  return {
    commit: () => {
      try {
        asUser(actor, () => renameSync(temp, destination))
      } catch (error) {
        throw httpErrorFromFsError(deniedAs(error, target, 'write'), target)
      } finally {
        staging.release()
      }
    },
    discard,
  }
}

/**
 * Writes `content` into `fd` and closes it, even when `content` fails: a small file in one
 * call, a bigger one through a write stream, whose writes run off the event loop. A big upload
 * may wait on the disk, and envd's other requests must not wait with it.
 */
async function writeContent(content: Readable, fd: number): Promise<void> {
  const head = await readUpTo(content, SMALL_FILE_BYTES).catch((error: unknown) => {
    closeSync(fd)
    throw error
  })
  if (head.ended) {
    try {
      writeAll(fd, Buffer.concat(head.chunks))
    } finally {
      closeSync(fd)
    }
    return
  }
  // The stream closes `fd` once it ends or fails.
  const file = createWriteStream('', { fd, highWaterMark: WRITE_BUFFER_BYTES })
  for (const chunk of head.chunks) file.write(chunk)
  await pipeline(content, file)
}

/**
 * The first chunks of `content`, until it ends or more than `limit` bytes have come; the rest
 * stays in the stream.
 */
async function readUpTo(
  content: Readable,
  limit: number,
): Promise<{ chunks: Buffer[]; ended: boolean }> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of content.iterator({ destroyOnReturn: false })) {
    chunks.push(chunk)
    size += chunk.length
    if (size > limit) return { chunks, ended: false }
  }
  return { chunks, ended: true }
}

/** `bytes` into `fd` at its offset, however many calls the kernel takes. */
function writeAll(fd: number, bytes: Buffer): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done)
}

/** An open temporary file, and whose credentials its later steps (rename, removal) use. */
interface Staging {
  fd: number
  temp: string
  /**
   * The temporary file for calls that follow a symlink at its name (its xattrs): `temp` for
   * the user, whose credentials bound what a swapped name could reach; for root, a descriptor
   * of its own, since its directory may be the user's, who could swap the name meanwhile.
   */
  content: string
  destination: string
  createdDirs: string[]
  actor: Credentials
  /** Lets go of what the staging holds open beyond `fd`. */
  release(): void
}

/**
 * Opens the temporary file as the user. Where the kernel denies the user creating the file or
 * its missing parents, creates them as root instead, as E2B's envd does (`root-create.ts`).
 */
function openStaging(target: string, user: OsUser): Staging {
  try {
    return { ...asUser(user, () => openStagingAsUser(target)), actor: user, release: () => {} }
  } catch (error) {
    const staging = mayCreateAsRoot(user, error) ? openStagingAsRoot(target, user) : undefined
    if (staging === undefined) throw deniedAs(error, target, 'write')
    return staging
  }
}

/**
 * With the caller's credentials: checks `target`, makes its missing parents and opens the
 * temporary file beside the destination (a symlink at `target` resolved).
 */
function openStagingAsUser(
  target: string,
): Pick<Staging, 'fd' | 'temp' | 'content' | 'destination' | 'createdDirs'> {
  const existing = statOrUndefined(target)
  if (existing?.isDirectory()) throw new HttpError(400, `path '${target}' is a directory`)
  // Overwriting needs write permission on the file itself, as writing it in place would.
  if (existing) closeSync(openSync(target, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK))
  const createdDirs = makeDirs(path.dirname(target))
  // Resolved once, so that the temporary file and its rename name the same directory even if
  // a symlink on the way is swapped meanwhile.
  const destination = existing
    ? realpathSync(target)
    : path.join(realpathSync(path.dirname(target)), path.basename(target))
  const temp = path.join(path.dirname(destination), stagingName())
  let fd: number | undefined
  try {
    fd = openSync(temp, 'wx', 0o600)
    fchmodSync(fd, existing ? existing.mode & 0o777 : 0o644)
    return { fd, temp, content: temp, destination, createdDirs }
  } catch (error) {
    if (fd !== undefined) {
      closeSync(fd)
      unlinkSync(temp)
    }
    removeDirs(createdDirs)
    throw error
  }
}

/**
 * As root, for a new file only: the parents are walked without following symlinks and the
 * temporary file and its rename name the destination's directory through envd's descriptor.
 * @returns undefined when root refuses too (a symlink on the way, an existing destination).
 */
function openStagingAsRoot(target: string, user: OsUser): Staging | undefined {
  const dir = holdDirectory(path.dirname(target), user)
  if (dir === undefined) return undefined
  const name = path.basename(target)
  const temp = stagingName()
  let fd: number | undefined
  let handle: number | undefined
  try {
    if (!entryExists(dir.entry(name))) fd = createFile(dir, temp, user, 0o644)
    // The file's own second descriptor, for `content`: the write stream closes `fd`.
    if (fd !== undefined) handle = openSync(`/proc/self/fd/${fd}`, fsConstants.O_RDONLY)
  } finally {
    if (handle === undefined) {
      if (fd !== undefined) {
        closeSync(fd)
        unlinkSync(dir.entry(temp))
      }
      removeDirs(dir.created)
      dir.release()
    }
  }
  if (fd === undefined || handle === undefined) return undefined
  let held: number | undefined = handle
  return {
    fd,
    temp: dir.entry(temp),
    content: `/proc/self/fd/${handle}`,
    destination: dir.entry(name),
    createdDirs: dir.created,
    actor: ROOT,
    release: () => {
      // Once only, as `dir.release`: a discard may follow a failed commit.
      if (held !== undefined) closeSync(held)
      held = undefined
      dir.release()
    },
  }
}

/** A fresh temporary name; the shared prefix lets directory watchers hide it (fs/upload-staging.ts). */
function stagingName(): string {
  return `${UPLOAD_STAGING_PREFIX}${randomBytes(8).toString('hex')}`
}

function statOrUndefined(target: string): Stats | undefined {
  try {
    return statSync(target)
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined
    throw error
  }
}

/**
 * Writes the metadata xattrs. The filesystem, not the disk, refuses metadata that does not fit
 * its per-inode space, so that is a `400` about the metadata rather than a full-disk `507`.
 */
function storeMetadata(file: string, metadata: Record<string, string>, target: string): void {
  if (Object.keys(metadata).length === 0) return
  try {
    replaceMetadata(file, metadata)
  } catch (error) {
    const code = errnoCode(error)
    if (code === 'ENOSPC' || code === 'E2BIG' || code === 'ERANGE') {
      throw new HttpError(400, `metadata does not fit in the extended attributes of '${target}'`)
    }
    if (code === 'ENOTSUP' || code === 'EOPNOTSUPP') {
      throw new HttpError(500, `the filesystem of '${target}' does not support file metadata`)
    }
    throw error
  }
}
