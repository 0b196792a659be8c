import type { ServerResponse } from 'node:http'

/** An error envd's HTTP routes answer with `{code, message}` and this status. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/**
 * Answers with envd's HTTP error body (wire contract §3.3). Headers the route set before it
 * failed stay (a `416` keeps its `Content-Range`); the content type becomes JSON.
 */
export function sendHttpError(response: ServerResponse, status: number, message: string): void {
  response.statusCode = status
  response.setHeader('content-type', 'application/json; charset=utf-8')
  response.setHeader('x-content-type-options', 'nosniff')
  response.end(JSON.stringify({ code: status, message }))
}
