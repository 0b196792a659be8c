import type { HttpExchange } from './http-exchange.js'

/** `GET /health`: 204, never cached; the liveness probe the agent and the SDK poll. */
export function healthRoute(exchange: HttpExchange): void {
  exchange.setHeader('cache-control', 'no-store')
  exchange.empty(204)
}
