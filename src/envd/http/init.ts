import * as z from 'zod/mini'
import type { EnvdContext } from '../context.js'
import { ENVD_CONTROL_HEADER } from '../handover.js'
import { INIT_CLOCK_SKEW_MS } from '../state.js'
import { ENVD_VERSION } from '../version.js'
import { HttpError } from './http-error.js'
import type { HttpExchange } from './http-exchange.js'

const initSchema = z.object({
  accessToken: z.optional(z.string()),
  envVars: z.optional(z.record(z.string(), z.string())),
  defaultUser: z.optional(z.string()),
  defaultWorkdir: z.optional(z.string()),
  timestamp: z.optional(z.iso.datetime({ offset: true })),
  volumeMounts: z.optional(z.array(z.unknown())),
  hyperloopIP: z.optional(z.string()),
  lifecycleID: z.optional(z.string()),
  caBundle: z.optional(z.string()),
  sandboxID: z.optional(z.string()),
  controlSecret: z.optional(z.string().check(z.minLength(32))),
})

/**
 * `POST /init`: the control plane's configuration push after boot and resume (wire contract
 * §3.3). In a sandbox only the agent may push, with the control secret of its handover, before
 * the body is even read. Env vars are replaced, the token is set or checked, stale pushes
 * change nothing, pushes from the future are refused.
 */
export function initRoute(ctx: EnvdContext): (exchange: HttpExchange) => Promise<void> {
  return async (exchange) => {
    if (!ctx.state.mayInit(exchange.header(ENVD_CONTROL_HEADER))) {
      throw new HttpError(
        401,
        '/init is reserved for the sandbox agent: control secret missing or wrong',
      )
    }
    const text = await exchange.text()
    let json: unknown
    try {
      json = text.trim() === '' ? {} : JSON.parse(text)
    } catch {
      throw new HttpError(400, 'invalid JSON body')
    }
    const parsed = initSchema.safeParse(json)
    if (!parsed.success)
      throw new HttpError(400, `invalid init request: ${z.prettifyError(parsed.error)}`)
    if (parsed.data.defaultUser) {
      await ctx.users.lookup(parsed.data.defaultUser).catch(() => {
        throw new HttpError(400, `default user '${parsed.data.defaultUser}' does not exist`)
      })
    }
    const outcome = ctx.state.applyInit(parsed.data)
    if (outcome === 'unauthorized') throw new HttpError(401, 'access token mismatch')
    if (outcome === 'future') {
      throw new HttpError(
        400,
        `init timestamp ${parsed.data.timestamp} is ahead of envd's clock by more than ${INIT_CLOCK_SKEW_MS} ms`,
      )
    }
    ctx.logger.info({ outcome, defaultUser: ctx.state.defaultUser }, 'init')
    exchange.setHeader('x-envd-version', ENVD_VERSION)
    exchange.empty(204)
  }
}
