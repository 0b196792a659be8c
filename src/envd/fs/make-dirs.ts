import { mkdirSync, rmdirSync } from 'node:fs'
import path from 'node:path'

/**
 * `mkdir -p dir`, each directory it creates `0755` (wire contract §3.3 and §3.4: uploads,
 * MakeDir and Move's destination parents belong to the request user, which they do because
 * this runs with that user's credentials, `asUser`). Existing directories stay as they are.
 * @returns the directories it created, outermost first, so a failed upload can remove them.
 */
export function makeDirs(dir: string): string[] {
  const firstCreated = mkdirSync(dir, { recursive: true, mode: 0o755 })
  if (firstCreated === undefined) return []
  const created = [firstCreated]
  for (const segment of path.relative(firstCreated, dir).split(path.sep).filter(Boolean)) {
    created.push(path.join(created[created.length - 1] ?? firstCreated, segment))
  }
  return created
}

/** Removes directories `makeDirs` created, innermost first, leaving any now in use. */
export function removeDirs(created: readonly string[]): void {
  for (const dir of [...created].reverse()) {
    try {
      rmdirSync(dir)
    } catch {
      // Not empty any more, or gone: either way not ours to remove.
    }
  }
}
