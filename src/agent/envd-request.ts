import { Agent, request } from 'node:http'

/** What envd answered: its status and whole body (the agent's calls get small ones). */
export interface EnvdReply {
  status: number
  body: Buffer
}

export interface EnvdRequestOptions {
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  /** Fails the request when its connection is silent this long. */
  timeoutMs?: number
}

/**
 * A connection idle this long is closed. Sandbox addresses are reused once a sandbox is gone;
 * its envd's exit closes the connection first, and this bounds any that missed that.
 */
const IDLE_CONNECTION_MS = 5_000

/**
 * Kept-alive connections from the agent to envds: a create's `/health`, `/init` and `/envs`
 * share them. Node's client, not `fetch`: undici sets up a pool per origin, and every sandbox
 * is a new origin. Three requests to a new loopback origin took 3.4 ms of CPU (client and
 * server) through `fetch`, 1.1 ms through this; a claim makes three, a cold create five.
 */
const agent = new Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS })

/** Sends one request to a sandbox's envd from the host and reads its whole answer. */
export function envdRequest(url: string, options: EnvdRequestOptions = {}): Promise<EnvdReply> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, {
      agent,
      method: options.method ?? 'GET',
      headers: options.headers,
      timeout: options.timeoutMs,
    })
    // Only where asked: the agent's idle limit reaches a request in flight too, and a busy
    // envd may take longer than that to answer one.
    const { timeoutMs } = options
    if (timeoutMs !== undefined) {
      outgoing.once('timeout', () => {
        outgoing.destroy(new Error(`envd did not answer ${url} within ${timeoutMs} ms`))
      })
    }
    outgoing.once('error', reject)
    outgoing.once('response', (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.once('error', reject)
      response.once('end', () => {
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) })
      })
    })
    outgoing.end(options.body)
  })
}
