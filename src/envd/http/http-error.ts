import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'

/** An error envd's HTTP routes answer with `{code, message}` and this status. */
export class HttpError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
  ) {
    super(message)
  }
}

/** Renders envd's HTTP error body (wire contract §3.3). */
export function errorResponse(c: Context, status: ContentfulStatusCode, message: string): Response {
  c.header('x-content-type-options', 'nosniff')
  return c.body(JSON.stringify({ code: status, message }), status, {
    'content-type': 'application/json; charset=utf-8',
  })
}
