import { STATUS_CODES } from 'node:http'
import type { Logger } from '../logger.js'

/**
 * Every answer the proxy gives instead of the sandbox's own, with the wire contract's status and
 * exact text (e2b-wire-contract.md §4.6 "Proxy error responses", §4.4 for auto-resume).
 */
export class ProxyError extends Error {
  constructor(
    readonly status: number,
    readonly contentType: string,
    readonly body: string,
    /** True for the JSON answers, which a browser navigation gets as an HTML page instead. */
    readonly hasPage: boolean,
    message: string,
  ) {
    super(message)
    this.name = 'ProxyError'
  }
}

/** The envd port: its own `X-Access-Token` guards it, and its control routes stay unreachable. */
export const ENVD_PORT = 49983

/** The traffic token header of private sandboxes (§4.6). */
export const TRAFFIC_TOKEN_HEADER = 'e2b-traffic-access-token'

// Malformed hosts and headers are answered the way Go's http.Error writes them: plain text with
// a trailing newline (§4.6 "Malformed host/headers").
function plain(status: number, text: string): ProxyError {
  return new ProxyError(status, 'text/plain; charset=utf-8', `${text}\n`, false, text)
}

function json(status: number, fields: { message: string } & Record<string, string | number>) {
  const body = JSON.stringify(fields)
  return new ProxyError(status, 'application/json; charset=utf-8', body, true, fields.message)
}

export const proxyErrors = {
  invalidHost: () => plain(400, 'Invalid host'),
  invalidSandboxID: () => plain(400, 'Invalid sandbox ID'),
  invalidSandboxPort: () => plain(400, 'Invalid sandbox port'),
  missingHeader: () => plain(400, 'missing header'),
  /** A request target for envd's port that is not in canonical origin form (issue 9). */
  invalidPath: () => plain(400, 'Invalid request path'),
  sandboxNotFound: (sandboxID: string) =>
    json(502, { sandboxId: sandboxID, message: 'The sandbox was not found', code: 502 }),
  portClosed: (sandboxID: string, port: number) =>
    json(502, {
      sandboxId: sandboxID,
      message: 'The sandbox is running but port is not open',
      port,
      code: 502,
    }),
  resumeDenied: (sandboxID: string) =>
    json(403, {
      sandboxId: sandboxID,
      message:
        "This sandbox can't be resumed with the credentials provided. Check your access token and try again.",
      code: 403,
    }),
  trafficTokenMissing: (sandboxID: string) =>
    json(403, {
      sandboxId: sandboxID,
      message: `Sandbox is secured with traffic access token. Token header '${TRAFFIC_TOKEN_HEADER}' is missing`,
      code: 403,
    }),
  trafficTokenInvalid: (sandboxID: string) =>
    json(403, {
      sandboxId: sandboxID,
      message: `Sandbox is secured with traffic access token. Provided token in header '${TRAFFIC_TOKEN_HEADER}' is invalid`,
      code: 403,
    }),
  internalRoute: (path: string) =>
    json(404, {
      message:
        'This endpoint is reserved for the E2B control plane and is not reachable through the sandbox URL',
      path,
      code: 404,
    }),
  /** Anything else that stops routing: a generic 500 whose cause is logged, never sent (§4.6). */
  internal: () => plain(500, 'Internal proxy error'),
}

/** The error as raw HTTP/1.1 bytes, for an upgrade socket that has no response object. */
export function rawResponse(error: ProxyError): string {
  const length = Buffer.byteLength(error.body)
  return (
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\n` +
    `Content-Type: ${error.contentType}\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n` +
    error.body
  )
}

/** A `ProxyError` as thrown, or a logged generic 500 for anything else (STYLE habit 7). */
export function asProxyError(error: unknown, logger: Logger): ProxyError {
  if (error instanceof ProxyError) return error
  logger.error({ err: error }, 'routing failed')
  return proxyErrors.internal()
}
