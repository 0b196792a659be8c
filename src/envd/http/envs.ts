import type { Hono } from 'hono'
import type { EnvdContext } from '../context.js'

/** `GET /envs`: the default env vars a new process inherits. */
export function registerEnvsRoute(app: Hono, ctx: EnvdContext): void {
  app.get('/envs', (c) => c.json(ctx.state.defaultEnv()))
}
