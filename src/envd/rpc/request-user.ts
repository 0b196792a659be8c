import { Code, ConnectError } from '@connectrpc/connect'
import { usernameFromBasicAuth } from '../auth.js'
import type { EnvdContext } from '../context.js'
import { resolveUserPath } from '../paths.js'
import type { OsUser } from '../users.js'

/** The OS user an RPC acts as, and path resolution on that user's behalf. */
export interface RequestUser {
  user: OsUser
  /** Resolves a client path for this user (wire contract §3.4 path rules). */
  resolvePath(requested: string): string
}

/**
 * The user selected by `Authorization: Basic base64("<user>:")`, else envd's default user.
 * An unknown name is `unauthenticated` with the contract's text (wire contract §3.2).
 */
export async function requestUser(ctx: EnvdContext, headers: Headers): Promise<RequestUser> {
  const username = usernameFromBasicAuth(headers.get('authorization')) ?? ctx.state.defaultUser
  const user = await ctx.users.lookup(username).catch(() => {
    throw new ConnectError(`invalid username: '${username}'`, Code.Unauthenticated)
  })
  const workdir = ctx.state.defaultWorkdir
  return { user, resolvePath: (requested) => resolveUserPath(requested, user, workdir) }
}
