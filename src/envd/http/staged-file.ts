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
} from 'node:fs'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { deniedAs } from '../fs/access-check.js'
import { asUser } from '../fs/as-user.js'
import { errnoCode } from '../fs/errno-code.js'
import { makeDirs, removeDirs } from '../fs/make-dirs.js'
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
 * each: the user must be able to write an existing file and to create and rename in its
 * directory, along a path the user may search. The bytes stream through the open descriptor.
 */
export async function stageFile(
  target: string,
  user: OsUser,
  content: Readable,
  metadata: Record<string, string>,
): Promise<StagedFile> {
  const staging = asUser(user, () => {
    try {
      return openStaging(target)
    } catch (error) {
      throw deniedAs(error, target, 'write')
    }
  })
  const { temp, destination, createdDirs } = staging
  const discard = (): void => {
    asUser(user, () => {
      try {
        unlinkSync(temp)
      } catch {
        // Already gone.
      }
      removeDirs(createdDirs)
    })
  }
  try {
    await pipeline(
      content,
      createWriteStream('', { fd: staging.fd, highWaterMark: WRITE_BUFFER_BYTES }),
    )
    asUser(user, () => storeMetadata(temp, metadata, target))
  } catch (error) {
    content.destroy()
    discard()
    throw error
  }
  return {
    commit: () =>
      asUser(user, () => {
        try {
          renameSync(temp, destination)
        } catch (error) {
          throw httpErrorFromFsError(deniedAs(error, target, 'write'), target)
        }
      }),
    discard,
  }
}

/**
 * With the caller's credentials: checks `target`, makes its missing parents and opens the
 * temporary file beside the destination (a symlink at `target` resolved).
 */
function openStaging(target: string): {
  fd: number
  temp: string
  destination: string
  createdDirs: string[]
} {
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
  // The shared prefix lets directory watchers hide the temporary name (fs/upload-staging.ts).
  const temp = path.join(
    path.dirname(destination),
    `${UPLOAD_STAGING_PREFIX}${randomBytes(8).toString('hex')}`,
  )
  let fd: number | undefined
  try {
    fd = openSync(temp, 'wx', 0o600)
    fchmodSync(fd, existing ? existing.mode & 0o777 : 0o644)
    return { fd, temp, destination, createdDirs }
  } catch (error) {
    if (fd !== undefined) {
      closeSync(fd)
      unlinkSync(temp)
    }
    removeDirs(createdDirs)
    throw error
  }
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
