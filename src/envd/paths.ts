import path from 'node:path'
import type { OsUser } from './users.js'

/**
 * Resolves a client path the way E2B's envd does: an empty path means the default workdir (or
 * the home when none is set), `~` and `~/x` expand to the user's home, and other relative
 * paths resolve against the user's home, not the workdir (E2B's `ExpandAndResolve`; its own
 * SDK tests write `hello.txt` as root and expect `/root/hello.txt`). Results are absolute and
 * cleaned.
 */
export function resolveUserPath(
  requested: string,
  user: Pick<OsUser, 'home'>,
  defaultWorkdir: string | undefined,
): string {
  if (requested === '') return path.resolve(defaultWorkdir || user.home)
  if (requested === '~') return path.resolve(user.home)
  if (requested.startsWith('~/')) return path.resolve(user.home, requested.slice(2))
  return path.resolve(user.home, requested)
}
