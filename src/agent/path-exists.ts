import { access } from 'node:fs/promises'

/** Whether anything exists at `path` (the agent runs as root, so access means existence). */
export function pathExists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  )
}
