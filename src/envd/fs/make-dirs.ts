import { chown, mkdir, rmdir } from 'node:fs/promises'
import path from 'node:path'
import type { OsUser } from '../users.js'

/**
 * `mkdir -p dir`, each directory it creates `0755` and owned by `owner` (wire contract §3.3
 * and §3.4: uploads, MakeDir and Move's destination parents belong to the request user; envd
 * runs as root, so without the chown they would belong to root). Existing directories keep
 * their owner.
 * @returns the directories it created, outermost first, so a failed upload can remove them.
 */
export async function makeOwnedDirs(
  dir: string,
  owner: Pick<OsUser, 'uid' | 'gid'>,
): Promise<string[]> {
  const firstCreated = await mkdir(dir, { recursive: true, mode: 0o755 })
  if (firstCreated === undefined) return []
  const created = [firstCreated]
  for (const segment of path.relative(firstCreated, dir).split(path.sep).filter(Boolean)) {
    created.push(path.join(created[created.length - 1] ?? firstCreated, segment))
  }
  try {
    for (const createdDir of created) await chown(createdDir, owner.uid, owner.gid)
  } catch (error) {
    await removeDirs(created)
    throw error
  }
  return created
}

/** Removes directories `makeOwnedDirs` created, innermost first, leaving any now in use. */
export async function removeDirs(created: readonly string[]): Promise<void> {
  for (const dir of [...created].reverse()) await rmdir(dir).catch(() => undefined)
}
