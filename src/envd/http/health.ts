import type { Hono } from 'hono'

/** `GET /health`: 204, never cached; the liveness probe the agent and the SDK poll. */
export function registerHealthRoute(app: Hono): void {
  app.get('/health', (c) => {
    c.header('cache-control', 'no-store')
    return c.body(null, 204)
  })
}
