import type { MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { apiErrors } from './errors.js'

/**
 * Refuses a request body larger than `maxBytes` with 413 before anything reads it. A body of
 * declared length is judged by its Content-Length header alone: Hono's `bodyLimit` looks at
 * the body first, and that makes @hono/node-server build a whole web `Request` for every call,
 * a GET's too (about 1 ms in `sandbar serve`). A chunked body goes through `bodyLimit`, which
 * counts it as it arrives. An HTTP/1.1 request with neither header has no body.
 */
export function requestBodyLimit(maxBytes: number): MiddlewareHandler {
  const refuse = () => {
    throw apiErrors.bodyTooLarge(maxBytes)
  }
  const chunked = bodyLimit({ maxSize: maxBytes, onError: refuse })
  return async (c, next) => {
    if (c.req.header('transfer-encoding') !== undefined) return chunked(c, next)
    if (Number(c.req.header('content-length') ?? 0) > maxBytes) refuse()
    await next()
  }
}
