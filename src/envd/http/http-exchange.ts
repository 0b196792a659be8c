import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

/**
 * One request to envd's plain HTTP routes and the means to answer it, on node:http itself.
 * A web-standard framework would cost every idle sandbox ~4 MiB: Hono's Node adapter touches
 * `Request`/`Response` at import, and that loads Node's whole fetch implementation (undici).
 */
export class HttpExchange {
  readonly url: URL

  constructor(
    readonly request: IncomingMessage,
    readonly response: ServerResponse,
  ) {
    this.url = new URL(request.url ?? '/', 'http://envd')
  }

  /** A query parameter's first value, decoded; `undefined` when absent. */
  query(name: string): string | undefined {
    return this.url.searchParams.get(name) ?? undefined
  }

  /** A request header; repeated ones arrive joined by `, `, as node:http joins them. */
  header(name: string): string | undefined {
    const value = this.request.headers[name]
    return Array.isArray(value) ? value.join(', ') : value
  }

  /** Sets a reply header; the reply below sends it. */
  setHeader(name: string, value: string): void {
    this.response.setHeader(name, value)
  }

  /** The whole request body as UTF-8 text. */
  async text(): Promise<string> {
    const chunks: Buffer[] = []
    for await (const chunk of this.request) chunks.push(chunk)
    return Buffer.concat(chunks).toString('utf8')
  }

  /** Answers with no body. */
  empty(status: number): void {
    this.response.statusCode = status
    this.response.end()
  }

  /** Answers with `body`, whole. */
  send(body: Buffer, status = 200): void {
    this.response.statusCode = status
    this.response.end(body)
  }

  json(body: unknown): void {
    this.response.setHeader('content-type', 'application/json')
    this.response.end(JSON.stringify(body))
  }

  /**
   * Streams `body` as the reply. Once it has begun, a failure can only cut the connection
   * short, so the client sees a truncated body; the failure is not reported further.
   */
  async stream(body: Readable, status = 200): Promise<void> {
    this.response.statusCode = status
    if (this.request.method === 'HEAD') {
      // node:http would discard every byte anyway; a large file need not be read for that.
      body.destroy()
      this.response.end()
      return
    }
    await pipeline(body, this.response).catch(() => undefined)
  }
}
