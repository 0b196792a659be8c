import {
  type Agent,
  type ClientRequest,
  request as httpRequest,
  type OutgoingHttpHeaders,
} from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { errnoCode } from '../errno-code.js'

/** Where and what to send to a sandbox port. */
export interface UpstreamOptions {
  agent: Agent
  address: string
  port: number
  method: string
  path: string
  headers: OutgoingHttpHeaders
  /** The whole request body, when it has all arrived: it leaves with the headers, in one write. */
  body?: Buffer
  /** The caller has the body's first bytes in hand, and the headers leave with them. */
  headersWithBody?: boolean
}

// A service just started in a sandbox (or envd forwarding a localhost-bound one, §3.1 "Port
// forwarding") may need a moment before it accepts; E2B's proxy chain retries the dial for that
// (wire contract §4.6 "Proxy chain"). Only refused dials retry: no request byte has left yet.
const DIAL_ATTEMPTS = 5
const DIAL_RETRY_MS = 100

/**
 * Opens a request to a sandbox port and resolves once its connection is established, so the
 * caller can start streaming the body knowing a refused port will not swallow it. A request
 * sent with its whole `body` is already complete.
 */
export async function openUpstream(options: UpstreamOptions): Promise<ClientRequest> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await connect(options)
    } catch (error: unknown) {
      if (attempt >= DIAL_ATTEMPTS || !isRefused(error)) throw error
      await sleep(DIAL_RETRY_MS)
    }
  }
}

function connect(options: UpstreamOptions): Promise<ClientRequest> {
  return new Promise((resolve, reject) => {
    const upstream = httpRequest({
      agent: options.agent,
      host: options.address,
      port: options.port,
      method: options.method,
      path: options.path,
      headers: options.headers,
    })
    // Without body bytes to carry them, the headers go out at once: a sandbox may answer a
    // request whose body is still to come (a Connect stream whose first message waits on the
    // answer).
    if (options.body !== undefined) upstream.end(options.body)
    else if (options.headersWithBody !== true) upstream.flushHeaders()
    const onError = (error: Error): void => reject(error)
    upstream.once('error', onError)
    upstream.once('socket', (socket) => {
      const ready = (): void => {
        upstream.off('error', onError)
        resolve(upstream)
      }
      if (socket.connecting) socket.once('connect', ready)
      else ready()
    })
  })
}

function isRefused(error: unknown): boolean {
  return errnoCode(error) === 'ECONNREFUSED'
}
