import type { Env, MiddlewareHandler } from 'hono'
import * as z from 'zod/mini'
import { apiErrors } from '../errors.js'

/** Parses `value` or throws the contract's `400 "validation error: ..."` (wire contract §1.1). */
export function parseOrThrow<S extends z.ZodMiniType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw apiErrors.validation(z.prettifyError(parsed.error))
  return parsed.data
}

/**
 * The JSON body validator. An absent or empty body counts as `{}`: the SDK sends some bodies
 * (pause, v2 connect) only when an option is set, whatever the content type says.
 */
export function jsonBody<S extends z.ZodMiniType<object>>(
  schema: S,
): MiddlewareHandler<Env, string, { in: { json: z.input<S> }; out: { json: z.infer<S> } }> {
  return async (c, next) => {
    const text = await c.req.text()
    let json: unknown = {}
    if (text.trim() !== '') {
      try {
        json = JSON.parse(text)
      } catch {
        throw apiErrors.validation('request body is not valid JSON')
      }
    }
    c.req.addValidatedData('json', parseOrThrow(schema, json))
    await next()
  }
}

/** The query validator. */
export function queryParams<S extends z.ZodMiniType<object>>(
  schema: S,
): MiddlewareHandler<Env, string, { in: { query: z.input<S> }; out: { query: z.infer<S> } }> {
  return async (c, next) => {
    c.req.addValidatedData('query', parseOrThrow(schema, c.req.query()))
    await next()
  }
}
