import http from 'node:http'
import { passesTokenGate, UNAUTHORIZED_MESSAGE } from './auth.js'
import type { EnvdContext } from './context.js'
import { sendHttpError } from './http/http-error.js'
import { createHttpRoutes } from './http/routes.js'
import type { RequestListener } from './rpc/rpc-listener.js'

/** Wire contract §3.1: CORS open to every origin, exposing the Connect headers. */
const corsHeaders: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'HEAD, GET, POST, PUT, PATCH, DELETE',
  'access-control-expose-headers':
    'Connect-Protocol-Version, Connect-Timeout-Ms, Grpc-Status, Grpc-Message, Grpc-Status-Details-Bin, Location, Cache-Control, X-Content-Type-Options',
  'access-control-max-age': '7200',
}

/** Connect RPC paths are `/<package>.<Service>/<Method>` (wire contract §3.1). */
const rpcPrefixes = ['/filesystem.Filesystem/', '/process.Process/']

/**
 * envd's HTTP server: one listener in front of the Connect services and the plain HTTP
 * routes, so CORS and the access-token gate apply to both exactly once.
 */
export function createEnvdServer(ctx: EnvdContext): http.Server {
  const httpRoutes = createHttpRoutes(ctx)
  const rpcRoutes = lazyRpcListener(ctx)
  const server = http.createServer((req, res) => {
    for (const [name, value] of Object.entries(corsHeaders)) res.setHeader(name, value)
    if (req.method === 'OPTIONS') {
      res.setHeader(
        'access-control-allow-headers',
        req.headers['access-control-request-headers'] ?? '*',
      )
      res.writeHead(204).end()
      return
    }
    const pathname = requestPath(req.url ?? '/')
    if (pathname === undefined) {
      sendHttpError(res, 400, `invalid request target ${req.url ?? ''}`)
      return
    }
    const token = req.headers['x-access-token']
    if (!passesTokenGate(ctx.state, req.method ?? 'GET', pathname, firstValue(token))) {
      sendHttpError(res, 401, UNAUTHORIZED_MESSAGE)
      return
    }
    if (rpcPrefixes.some((prefix) => pathname.startsWith(prefix))) {
      rpcRoutes.handle(req, res)
      return
    }
    // `/init` is the agent's last step before a client gets the sandbox, whose first call is
    // usually an RPC (a command): the services load now, once the answer is out.
    // A failed load is reported by the first RPC, which waits for the same load.
    if (pathname === '/init') res.once('finish', () => rpcRoutes.load().catch(() => undefined))
    httpRoutes(req, res)
  })
  // Wire contract §3.1: no read/write timeouts; long uploads and process streams stay open.
  server.requestTimeout = 0
  server.headersTimeout = 60_000
  server.keepAliveTimeout = 640_000
  return server
}

/**
 * The Connect services, loaded at the first RPC or right after `/init`: their protobuf
 * descriptors, connect-node and the services cost every sandbox start ~17 ms and its envd
 * ~4 MiB, which envd's start (until `/health` answers) does without. Requests wait, in order,
 * for the one load.
 */
function lazyRpcListener(ctx: EnvdContext): {
  handle: RequestListener
  load: () => Promise<RequestListener>
} {
  let listener: Promise<RequestListener> | undefined
  const load = (): Promise<RequestListener> => {
    listener ??= import('./rpc/rpc-listener.js').then((rpc) => rpc.createRpcListener(ctx))
    return listener
  }
  return {
    handle: (req, res) => {
      load().then(
        (handle) => handle(req, res),
        (error: unknown) => {
          ctx.logger.error({ err: error }, 'loading the Connect services failed')
          sendHttpError(res, 500, 'internal error')
        },
      )
    },
    load,
  }
}

/**
 * The path envd routes on, or undefined for a target WHATWG URL parsing refuses (`//`,
 * `//:x/health`): such a target must not throw out of the request listener and end envd.
 */
function requestPath(target: string): string | undefined {
  try {
    return new URL(target, 'http://envd').pathname
  } catch {
    return undefined
  }
}

function firstValue(header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? header[0] : header
}
