import type { IncomingMessage, ServerResponse } from 'node:http'
import { connectNodeAdapter } from '@connectrpc/connect-node'
import type { EnvdContext } from '../context.js'
import { registerRpcRoutes } from './routes.js'

/** A Node request listener, as `http.createServer` takes. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void

/** envd's Connect services behind one Node request listener. */
export function createRpcListener(ctx: EnvdContext): RequestListener {
  return connectNodeAdapter({ routes: registerRpcRoutes(ctx) })
}
