import { randomBytes } from 'node:crypto'
import type { Stats } from 'node:fs'
import { open, realpath, rename, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { assertMayAccess, assertMayCreate } from '../fs/access-check.js'
import { makeOwnedDirs, removeDirs } from '../fs/make-dirs.js'
import { UPLOAD_STAGING_PREFIX } from '../fs/upload-staging.js'
import { replaceMetadata } from '../fs/xattr-metadata.js'
import type { OsUser } from '../users.js'
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
  commit(): Promise<void>
  /** Removes the file and the directories staging created. */
  discard(): Promise<void>
}

/**
 * Streams `content` into a temporary file in the destination's directory, owned by `user`,
 * with `metadata` as its `user.e2b.*` xattrs. Until `commit()` nothing is visible at `target`,
 * so a failed upload leaves no partial file (wire contract §3.3 overwrite semantics).
 * Overwriting keeps the old file's permission bits (set-id bits drop, as they do when root
 * chowns a file); a new file is `0644`, as envd's `0666 &^ umask`.
 * A symlink at `target` is followed, as `open(2)` would.
 */
export async function stageFile(
  target: string,
  user: OsUser,
  content: Readable,
  metadata: Record<string, string>,
): Promise<StagedFile> {
  const existing = await stat(target).catch(() => undefined)
  await assertWritable(target, existing, user)
  const destination = existing ? await realpath(target) : target
  const createdDirs = await makeOwnedDirs(path.dirname(destination), user)
  // The shared prefix lets directory watchers hide the temporary name (fs/upload-staging.ts).
  const temp = path.join(
    path.dirname(destination),
    `${UPLOAD_STAGING_PREFIX}${randomBytes(8).toString('hex')}`,
  )
  const discard = async (): Promise<void> => {
    await unlink(temp).catch(() => undefined)
    await removeDirs(createdDirs)
  }
  try {
    const handle = await open(temp, 'wx', 0o600)
    try {
      await handle.chown(user.uid, user.gid)
      await handle.chmod(existing ? existing.mode & 0o777 : 0o644)
    } catch (error) {
      await handle.close()
      throw error
    }
    await pipeline(content, handle.createWriteStream({ highWaterMark: WRITE_BUFFER_BYTES }))
    await storeMetadata(temp, metadata, target)
  } catch (error) {
    content.destroy()
    await discard()
    throw error
  }
  return { commit: () => rename(temp, destination), discard }
}

async function assertWritable(target: string, existing: Stats | undefined, user: OsUser) {
  if (existing?.isDirectory()) throw new HttpError(400, `path '${target}' is a directory`)
  if (existing) await assertMayAccess(target, user, 'write')
  else await assertMayCreate(target, user)
}

/**
 * Writes the metadata xattrs. The filesystem, not the disk, refuses metadata that does not fit
 * its per-inode space, so that is a `400` about the metadata rather than a full-disk `507`.
 */
async function storeMetadata(
  file: string,
  metadata: Record<string, string>,
  target: string,
): Promise<void> {
  if (Object.keys(metadata).length === 0) return
  await replaceMetadata(file, metadata).catch((error: unknown) => {
    const code = error instanceof Error && 'code' in error ? error.code : undefined
    if (code === 'ENOSPC' || code === 'E2BIG' || code === 'ERANGE') {
      throw new HttpError(400, `metadata does not fit in the extended attributes of '${target}'`)
    }
    if (code === 'ENOTSUP' || code === 'EOPNOTSUPP') {
      throw new HttpError(500, `the filesystem of '${target}' does not support file metadata`)
    }
    throw error
  })
}
