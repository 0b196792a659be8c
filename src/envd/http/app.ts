import { Hono } from 'hono'
import type { EnvdContext } from '../context.js'
import { registerEnvsRoute } from './envs.js'
import { registerFileRoutes } from './files.js'
import { registerHealthRoute } from './health.js'
import { errorResponse, HttpError } from './http-error.js'
import { registerInitRoute } from './init.js'
import { registerMetricsRoute } from './metrics.js'

/** envd's plain HTTP routes (wire contract §3.3); the access-token gate sits in front. */
export function createHttpApp(ctx: EnvdContext): Hono {
  const app = new Hono()
  registerHealthRoute(app)
  registerEnvsRoute(app, ctx)
  registerMetricsRoute(app)
  registerInitRoute(app, ctx)
  registerFileRoutes(app, ctx)
  app.notFound((c) => errorResponse(c, 404, `route ${c.req.method} ${c.req.path} not found`))
  app.onError((error, c) => {
    if (error instanceof HttpError) return errorResponse(c, error.status, error.message)
    ctx.logger.error({ err: error, path: c.req.path }, 'http route failed')
    return errorResponse(c, 500, 'internal error')
  })
  return app
}
