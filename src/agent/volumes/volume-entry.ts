import type { Stats } from 'node:fs'

/** wave2-contracts §2.3 `VolumeEntryStat`'s `type`. */
export type VolumeEntryType = 'unknown' | 'file' | 'directory' | 'symlink'

/** One entry of a volume (wave2-contracts §2.3 `VolumeEntryStat`). */
export interface VolumeEntry {
  name: string
  type: VolumeEntryType
  /** Absolute, inside the volume. */
  path: string
  size: number
  /** Permission bits only (with setuid, setgid and sticky). */
  mode: number
  uid: number
  gid: number
  atime: Date
  mtime: Date
  ctime: Date
  /** What a symlink points at, as written: reported, never followed. */
  target?: string
}

/** The entry at `path` (segments joined) from its `lstat`/`fstat`. Pure. */
export function volumeEntry(stats: Stats, path: string, target?: string): VolumeEntry {
  const name = path === '/' ? '/' : path.slice(path.lastIndexOf('/') + 1)
  return {
    name,
    type: entryType(stats),
    path,
    size: stats.size,
    mode: stats.mode & 0o7777,
    uid: stats.uid,
    gid: stats.gid,
    atime: stats.atime,
    mtime: stats.mtime,
    ctime: stats.ctime,
    ...(target === undefined ? {} : { target }),
  }
}

function entryType(stats: Stats): VolumeEntryType {
  if (stats.isFile()) return 'file'
  if (stats.isDirectory()) return 'directory'
  if (stats.isSymbolicLink()) return 'symlink'
  return 'unknown'
}

/** `child` inside the directory at `parent`, both absolute volume paths. */
export function childPath(parent: string, child: string): string {
  return parent === '/' ? `/${child}` : `${parent}/${child}`
}
