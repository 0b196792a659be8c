import { type ActingUser, actingUser } from '../acting-user.js'
import type { EnvdContext } from '../context.js'
import { HttpError } from './http-error.js'

/**
 * The user a file route acts as: the `username` query value or body field, else envd's
 * default user. An unknown name is 401 with envd's text (wire contract §3.2), which quotes
 * Go's lookup error.
 */
export async function httpUser(
  ctx: EnvdContext,
  username: string | undefined,
): Promise<ActingUser> {
  const name = username || ctx.state.defaultUser
  return actingUser(ctx, name).catch(() => {
    throw new HttpError(401, `error looking up user '${name}': user: unknown user ${name}`)
  })
}
