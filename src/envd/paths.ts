import path from 'node:path'
import type { OsUser } from './users.js'

/**
 * Resolves a client path the way envd does (wire contract §3.4): `~` and `~/x` expand to the
 * user's home, relative paths resolve against the default workdir (or the home when none is
 * set), and the result is absolute and cleaned.
 */
export function resolveUserPath(
  requested: string,
  user: Pick<OsUser, 'home'>,
  defaultWorkdir: string | undefined,
): string {
  if (requested === '~') return path.resolve(user.home)
  if (requested.startsWith('~/')) return path.resolve(user.home, requested.slice(2))
  return path.resolve(defaultWorkdir || user.home, requested)
}
