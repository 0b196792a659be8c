import { lstatSync, realpathSync, type Stats, statSync } from 'node:fs'
import path from 'node:path'
import { create } from '@bufbuild/protobuf'
import { timestampFromDate } from '@bufbuild/protobuf/wkt'
import { type EntryInfo, EntryInfoSchema, FileType } from '../gen/filesystem/filesystem_pb.js'
import type { UserDirectory } from '../users.js'
import { goFileModeString } from './file-mode-string.js'
import { readMetadata } from './xattr-metadata.js'

/** Owner and group names for display (numeric fallback), as `UserDirectory.names()` returns. */
export type OwnerNames = Awaited<ReturnType<UserDirectory['names']>>

/**
 * The EntryInfo of wire contract §3.4 for `entryPath` (absolute), from `lstat`: `permissions`,
 * size, owner and times describe the entry itself. For a symlink whose target exists, `type` and
 * `mode` are the target's and `symlinkTarget` is the fully resolved path. A dangling or cyclic
 * symlink has type UNSPECIFIED, mode 0 and its own path as target, as E2B's envd reports it
 * (the SDK's `list()` then leaves it out).
 *
 * Synchronous, so that it can run with the request user's credentials (`asUser`).
 *
 * @throws the `lstat` error (e.g. `ENOENT`) when the entry does not exist.
 */
export function entryInfo(entryPath: string, names: OwnerNames): EntryInfo {
  const own = lstatSync(entryPath)
  const link = own.isSymbolicLink() ? resolveSymlink(entryPath) : undefined
  // The stats that decide `type` and `mode`: the target's for a symlink, undefined if dangling.
  const typeSource = link ? link.stats : own
  return create(EntryInfoSchema, {
    name: path.basename(entryPath),
    type: typeSource ? fileTypeOf(typeSource) : FileType.UNSPECIFIED,
    path: entryPath,
    size: BigInt(own.size),
    mode: typeSource ? typeSource.mode & 0o777 : 0,
    permissions: goFileModeString(own.mode),
    owner: names.user(own.uid),
    group: names.group(own.gid),
    modifiedTime: timestampFromDate(own.mtime),
    symlinkTarget: link?.path,
    metadata: readMetadata(entryPath),
  })
}

function resolveSymlink(link: string): { path: string; stats: Stats | undefined } {
  try {
    const resolved = realpathSync(link)
    return { path: resolved, stats: statSync(resolved) }
  } catch {
    return { path: link, stats: undefined }
  }
}

function fileTypeOf(stats: Stats): FileType {
  if (stats.isFile()) return FileType.FILE
  if (stats.isDirectory()) return FileType.DIRECTORY
  if (stats.isSymbolicLink()) return FileType.SYMLINK
  return FileType.UNSPECIFIED
}
