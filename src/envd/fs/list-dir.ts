import type { Dirent } from 'node:fs'
import { readdir, realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import type { EntryInfo } from '../gen/filesystem/filesystem_pb.js'
import { mayAccess } from '../permissions.js'
import type { OsUser } from '../users.js'
import { AccessDeniedError } from './access-check.js'
import { entryInfo, type OwnerNames } from './entry-info.js'

/** Why a ListDir request cannot be served: the root is missing, not a directory, or a loop. */
export class NotADirectoryError extends Error {
  readonly code = 'ENOTDIR'
  constructor(readonly path: string) {
    super(`path is not a directory: ${path}`)
  }
}

/**
 * The entries up to `depth` levels below `dirPath` (wire contract §3.4 ListDir), never the
 * directory itself. A symlinked root is followed, but entries keep paths under the requested
 * path; symlinks below the root are listed, not descended. Entries that vanish while listing are
 * skipped. The user needs read and search permission on the root; subdirectories the user may not
 * read are listed but not descended, as `ls -R` carries on past them.
 *
 * @throws the `realpath` error (`ENOENT`, `ELOOP`), NotADirectoryError, or AccessDeniedError.
 */
export async function listDir(
  dirPath: string,
  depth: number,
  user: OsUser,
  names: OwnerNames,
): Promise<EntryInfo[]> {
  const resolved = await realpath(dirPath)
  const info = await stat(resolved)
  if (!info.isDirectory()) throw new NotADirectoryError(dirPath)
  if (!mayAccess(info, user, 'read') || !mayAccess(info, user, 'execute')) {
    throw new AccessDeniedError(dirPath, 'read')
  }
  const entries: EntryInfo[] = []
  await walk(resolved, dirPath, Math.max(depth, 1), { user, names, entries })
  return entries
}

interface WalkState {
  user: OsUser
  names: OwnerNames
  entries: EntryInfo[]
}

async function walk(
  realDir: string,
  shownDir: string,
  levels: number,
  state: WalkState,
): Promise<void> {
  const children = await readdir(realDir, { withFileTypes: true }).catch((): Dirent[] => [])
  children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const child of children) {
    const shown = path.join(shownDir, child.name)
    const info = await entryInfo(shown, state.names).catch(() => undefined)
    if (!info) continue
    state.entries.push(info)
    if (
      levels > 1 &&
      child.isDirectory() &&
      (await mayDescend(path.join(realDir, child.name), state.user))
    ) {
      await walk(path.join(realDir, child.name), shown, levels - 1, state)
    }
  }
}

async function mayDescend(dir: string, user: OsUser): Promise<boolean> {
  const info = await stat(dir).catch(() => undefined)
  return info !== undefined && mayAccess(info, user, 'read') && mayAccess(info, user, 'execute')
}
