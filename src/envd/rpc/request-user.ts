import { Code, ConnectError } from '@connectrpc/connect'
import { type ActingUser, actingUser } from '../acting-user.js'
import { usernameFromBasicAuth } from '../auth.js'
import type { EnvdContext } from '../context.js'

/**
 * The user an RPC acts as: `Authorization: Basic base64("<user>:")`, else envd's default
 * user. An unknown name is `unauthenticated` with the contract's text (wire contract §3.2).
 */
export async function requestUser(ctx: EnvdContext, headers: Headers): Promise<ActingUser> {
  const username = usernameFromBasicAuth(headers.get('authorization')) ?? ctx.state.defaultUser
  return actingUser(ctx, username).catch(() => {
    throw new ConnectError(`invalid username: '${username}'`, Code.Unauthenticated)
  })
}
