import type { Dirent, Stats } from 'node:fs'
import { chmod, lchown, lstat, readdir } from 'node:fs/promises'
import path from 'node:path'

/**
 * Size of the user namespace's ID map: container IDs 0…65535 map to host IDs shift…shift+65535
 * (host-facts, User namespaces). An ID outside it has no owner inside the sandbox.
 */
export const ID_MAP_SIZE = 65_536

/** How many entries of one directory are changed at once (libuv's pool has 4 threads). */
const CONCURRENCY = 32

const SETUID_SETGID = 0o6000

/** The host ID that a container ID maps to. */
export function shiftedID(id: number, shift: number): number {
  if (!Number.isInteger(id) || id < 0 || id >= ID_MAP_SIZE) {
    throw new RangeError(`ID ${id} is outside the sandbox's ID map (0…${ID_MAP_SIZE - 1})`)
  }
  return shift + id
}

/**
 * The mode to set again after chown, or undefined when none is needed. chown(2) clears the
 * setuid and setgid bits of a non-directory (sudo, passwd, mount would lose them), so those
 * files get their full permission bits back. Symlinks have no mode of their own.
 */
export function modeToRestore(stats: Pick<Stats, 'mode' | 'isSymbolicLink'>): number | undefined {
  if (stats.isSymbolicLink()) return undefined
  return (stats.mode & SETUID_SETGID) === 0 ? undefined : stats.mode & 0o7777
}

/** What a shift did, for the build log. */
export interface ShiftSummary {
  entries: number
  millis: number
}

/**
 * Adds `shift` to the owner and group of every entry under `root` (root included), in place,
 * so the layer belongs to the sandbox's root once mapped (host-facts measured 0.25 s for a
 * minimal Debian). Hard links are shifted once (by inode), symlinks themselves (lchown), and
 * the walk stays on `root`'s filesystem. Run it once per fresh tree: it is not idempotent.
 */
export async function shiftTree(root: string, shift: number): Promise<ShiftSummary> {
  const started = performance.now()
  const rootStats = await lstat(root)
  const seen = new Set<string>()
  let entries = 0
  const visit = async (file: string, stats: Stats): Promise<void> => {
    entries += 1
    if (stats.nlink > 1 && !stats.isDirectory()) {
      const key = `${stats.dev}:${stats.ino}`
      if (seen.has(key)) return
      seen.add(key)
    }
    await lchown(file, shiftedID(stats.uid, shift), shiftedID(stats.gid, shift))
    const mode = modeToRestore(stats)
    if (mode !== undefined) await chmod(file, mode)
  }
  const pending: string[] = [root]
  await visit(root, rootStats)
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    const children = await readdir(dir, { withFileTypes: true })
    for (let start = 0; start < children.length; start += CONCURRENCY) {
      const batch = children.slice(start, start + CONCURRENCY)
      await Promise.all(batch.map((child) => visitChild(child, dir, rootStats.dev, pending, visit)))
    }
  }
  return { entries, millis: Math.round(performance.now() - started) }
}

async function visitChild(
  child: Dirent,
  dir: string,
  device: number,
  pending: string[],
  visit: (file: string, stats: Stats) => Promise<void>,
): Promise<void> {
  const file = path.join(dir, child.name)
  const stats = await lstat(file)
  if (stats.dev !== device) return
  await visit(file, stats)
  if (stats.isDirectory()) pending.push(file)
}
