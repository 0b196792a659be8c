import type { EnvdContext } from './context.js'
import { resolveUserPath } from './paths.js'
import type { OsUser } from './users.js'

/** The OS user a request acts as, and path resolution on that user's behalf. */
export interface ActingUser {
  user: OsUser
  /** Resolves a client path for this user (see `resolveUserPath`). */
  resolvePath(requested: string): string
}

/**
 * The named user, or envd's default user when no name is given.
 * @throws UnknownUserError when the name is not an account in the sandbox.
 */
export async function actingUser(
  ctx: EnvdContext,
  username: string | undefined,
): Promise<ActingUser> {
  const user = await ctx.users.lookup(username || ctx.state.defaultUser)
  const workdir = ctx.state.defaultWorkdir
  return { user, resolvePath: (requested) => resolveUserPath(requested, user, workdir) }
}
