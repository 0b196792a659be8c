import { createMiddleware } from 'hono/factory'
import type { Store, Team } from '../store/index.js'
import { apiErrors } from './errors.js'

/** What authenticated routes see: the team that owns the API key. */
export type AuthEnv = { Variables: { team: Team } }

/**
 * `ApiKeyAuth` (wire contract §1.1): the team API key in `X-API-Key`; missing or unknown →
 * `401` with the "Invalid API key" text.
 */
export function apiKeyAuth(store: Store) {
  return createMiddleware<AuthEnv>(async (c, next) => {
    const key = c.req.header('x-api-key')
    if (key === undefined || key === '') throw apiErrors.invalidApiKey('missing X-API-Key header')
    const team = await store.teamForApiKey(key)
    if (team === undefined) throw apiErrors.invalidApiKey('invalid API key')
    c.set('team', team)
    await next()
  })
}
