import { once } from 'node:events'
import {
  type ClientRequest,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type Server,
} from 'node:http'
import type { Readable } from 'node:stream'
import { pino } from 'pino'
import {
  createProxy,
  type ProxiedSandbox,
  type ProxyOptions,
  type SandboxDirectory,
  type SandboxProxy,
} from '../../src/proxy/index.js'

export const DOMAIN = 'sandbar.test'

/**
 * The proxy's input in these tests: sandboxes held in a Map, pointing at servers the test runs
 * on loopback addresses. `resume` flips a paused entry to running after `resumeDelayMs` and
 * counts its calls.
 */
export class MapDirectory implements SandboxDirectory {
  readonly sandboxes = new Map<string, ProxiedSandbox>()
  resumeCalls = 0
  resumeDelayMs = 200

  async lookup(sandboxID: string): Promise<ProxiedSandbox | undefined> {
    return this.sandboxes.get(sandboxID)
  }

  async resume(sandboxID: string): Promise<ProxiedSandbox> {
    this.resumeCalls++
    await new Promise((resolve) => setTimeout(resolve, this.resumeDelayMs))
    const sandbox = this.sandboxes.get(sandboxID)
    if (sandbox === undefined) throw new Error(`no sandbox ${sandboxID}`)
    const running = { ...sandbox, state: 'running' as const }
    this.sandboxes.set(sandboxID, running)
    return running
  }
}

/** A proxy on 127.0.0.1 over `directory`, with its port; `options` override the defaults. */
export async function startProxy(
  directory: SandboxDirectory,
  options: Partial<ProxyOptions> = {},
): Promise<{ proxy: SandboxProxy; port: number }> {
  const proxy = createProxy({
    domain: DOMAIN,
    directory,
    logger: pino({ level: process.env.PROXY_TEST_LOG ?? 'silent' }),
    ...options,
  })
  const port = await proxy.listen(0, '127.0.0.1')
  return { proxy, port }
}

/** Starts `server` on a loopback address and returns its port. */
export async function listenOn(server: Server, address: string): Promise<number> {
  server.listen(0, address)
  await once(server, 'listening')
  const bound = server.address()
  if (bound === null || typeof bound === 'string') throw new Error('server is not on TCP')
  return bound.port
}

/** A port on `address` that nothing listens on. */
export async function closedPort(address: string): Promise<number> {
  const server = createServer()
  const port = await listenOn(server, address)
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Closes a server and every connection it holds. */
export async function stopServer(server: Server): Promise<void> {
  const closed = new Promise((resolve) => server.close(resolve))
  server.closeAllConnections()
  await closed
}

export interface ProxyAnswer {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

/** One request to the proxy, with whatever host and headers the test names, read whole. */
export async function send(
  proxyPort: number,
  options: { host: string; path?: string; method?: string; headers?: Record<string, string> },
  body?: Readable,
): Promise<ProxyAnswer> {
  const req = request({
    host: '127.0.0.1',
    port: proxyPort,
    method: options.method ?? 'GET',
    path: options.path ?? '/',
    headers: { ...options.headers, host: options.host },
  })
  if (body === undefined) req.end()
  else body.pipe(req)
  const res = await responseTo(req)
  const chunks: Buffer[] = []
  for await (const chunk of res) chunks.push(Buffer.from(chunk))
  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    body: Buffer.concat(chunks).toString(),
  }
}

/** The response to a request, or its error. */
export function responseTo(req: ClientRequest): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve)
    req.once('error', reject)
  })
}

/** The JSON body of an answer. */
export function json(answer: ProxyAnswer): unknown {
  return JSON.parse(answer.body)
}
