import { type Dirent, readdirSync, realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import type { EntryInfo } from '../gen/filesystem/filesystem_pb.js'
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
 * skipped. Run with the request user's credentials (`asUser`), so the kernel decides: the root
 * needs read and search permission; subdirectories the user may not read are listed but not
 * descended, as `ls -R` carries on past them.
 *
 * @throws the `realpath` error (`ENOENT`, `ELOOP`), NotADirectoryError, or the kernel's `EACCES`.
 */
export function listDir(dirPath: string, depth: number, names: OwnerNames): EntryInfo[] {
  const resolved = realpathSync(dirPath)
  if (!statSync(resolved).isDirectory()) throw new NotADirectoryError(dirPath)
  // Resolving `<dir>/.` needs search permission on the directory; readdir needs read.
  statSync(`${resolved}/.`)
  const entries: EntryInfo[] = []
  walk(readdirSync(resolved, { withFileTypes: true }), resolved, dirPath, Math.max(depth, 1), {
    names,
    entries,
  })
  return entries
}

interface WalkState {
  names: OwnerNames
  entries: EntryInfo[]
}

function walk(
  children: Dirent[],
  realDir: string,
  shownDir: string,
  levels: number,
  state: WalkState,
): void {
  children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const child of children) {
    const shown = path.join(shownDir, child.name)
    const info = entryOrUndefined(shown, state.names)
    if (!info) continue
    state.entries.push(info)
    if (levels <= 1 || !child.isDirectory()) continue
    const realChild = path.join(realDir, child.name)
    const grandchildren = readableEntries(realChild)
    if (grandchildren) walk(grandchildren, realChild, shown, levels - 1, state)
  }
}

function entryOrUndefined(entryPath: string, names: OwnerNames): EntryInfo | undefined {
  try {
    return entryInfo(entryPath, names)
  } catch {
    return undefined
  }
}

/** A subdirectory's entries, or undefined when it may not be read (or vanished). */
function readableEntries(dir: string): Dirent[] | undefined {
  try {
    return readdirSync(dir, { withFileTypes: true })
  } catch {
    return undefined
  }
}
