import { RegExpRouter } from 'hono/router/reg-exp-router'
import type { EnvdContext } from '../context.js'
import type { RequestListener } from '../rpc/rpc-listener.js'
import { envsRoute } from './envs.js'
import { composeFiles } from './files-compose.js'
import { downloadFile } from './files-download.js'
import { uploadFiles } from './files-upload.js'
import { healthRoute } from './health.js'
import { HttpError, sendHttpError } from './http-error.js'
import { HttpExchange } from './http-exchange.js'
import { initRoute } from './init.js'
import { metricsRoute } from './metrics.js'

type Route = (exchange: HttpExchange) => Promise<void> | void

/**
 * envd's plain HTTP routes (wire contract §3.3), on Hono's router alone: the rest of Hono
 * works on web `Request`/`Response` objects (see http-exchange.ts for their cost). The
 * access-token gate sits in front; `GET` and `POST /files` pass it and authorize themselves
 * (token header or signed URL, §3.2).
 */
export function createHttpRoutes(ctx: EnvdContext): RequestListener {
  const router = new RegExpRouter<Route>()
  router.add('GET', '/health', healthRoute)
  router.add('GET', '/envs', envsRoute(ctx))
  router.add('GET', '/metrics', metricsRoute())
  router.add('POST', '/init', initRoute(ctx))
  router.add('GET', '/files', (exchange) => downloadFile(exchange, ctx))
  router.add('POST', '/files', (exchange) => uploadFiles(exchange, ctx))
  router.add('POST', '/files/compose', (exchange) => composeFiles(exchange, ctx))
  return (req, res) => {
    const exchange = new HttpExchange(req, res)
    // HEAD is GET without the body, which node:http leaves out by itself.
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET')
    const [[match]] = router.match(method, exchange.url.pathname)
    if (match === undefined) {
      sendHttpError(res, 404, `route ${req.method} ${exchange.url.pathname} not found`)
      return
    }
    void answer(match[0], exchange, ctx)
  }
}

/** Runs the route; what it throws becomes the error reply, or cuts a reply already begun. */
async function answer(route: Route, exchange: HttpExchange, ctx: EnvdContext): Promise<void> {
  const { response } = exchange
  try {
    await route(exchange)
  } catch (error) {
    if (response.headersSent) response.destroy()
    else if (error instanceof HttpError) sendHttpError(response, error.status, error.message)
    else {
      ctx.logger.error({ err: error, path: exchange.url.pathname }, 'http route failed')
      sendHttpError(response, 500, 'internal error')
    }
  }
}
