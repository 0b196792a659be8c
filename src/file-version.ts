import { statSync } from 'node:fs'

/**
 * What tells one content of a file from another without reading it: its inode, change time
 * and size (a rename puts a new inode in place, a write in place moves the change time), or
 * undefined when there is no file.
 */
export function fileVersion(file: string): string | undefined {
  const stats = statSync(file, { bigint: true, throwIfNoEntry: false })
  return stats === undefined ? undefined : `${stats.ino}:${stats.ctimeNs}:${stats.size}`
}
