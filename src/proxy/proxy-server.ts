import {
  Agent,
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { browserPage, isBrowserNavigation } from './browser-page.js'
import { coalesceWrites } from './coalesce-writes.js'
import { endToEndHeaders, isTls, upstreamHeaders } from './forward-headers.js'
import type { ProxyOptions } from './index.js'
import { asProxyError, type ProxyError, proxyErrors } from './proxy-errors.js'
import { hostnameOf } from './route-target.js'
import { type Admission, SandboxGate } from './sandbox-gate.js'
import { tunnelUpgrade } from './upgrade-tunnel.js'
import { openUpstream } from './upstream-request.js'

/** What the proxy server needs: the connection limits and TLS belong to its port. */
export type ProxyServerOptions = Pick<ProxyOptions, 'domain' | 'directory' | 'logger' | 'api'>

// Idle keep-alive connections outlive GCP's 600 s load-balancer timeout, as E2B's proxies do
// (wire contract §4.6 "Idle timeouts 610/620 s"); the connection caps bound what they hold.
const KEEP_ALIVE_MS = 620_000
// A new connection must have sent a request's headers within 20 s (idle until then), and a
// request on a kept-alive one within 20 s of its first byte. Browsers and the SDK open a connection to send a
// request at once, and its headers are one packet; only a connection held open for its own
// sake (or a slowloris trickle) waits that long. A browser whose speculative connection is
// closed unused simply opens another.
export const SILENCE_MS = 20_000
// Receiving one whole request, body included, may take an hour: the SDK uploads a file as one
// body, and 4 GiB over a 10 Mbit/s uplink takes 57 minutes. Answers are not limited (a Connect
// server stream or a download lasts as long as it lasts, envd has no write timeout, §3.1), and
// neither are upgraded (WebSocket) connections, which Node stops timing at the upgrade.
const REQUEST_MS = 3_600_000
// How often Node checks the headers and request timeouts (a walk over the connections that
// are mid-request): a trickled request is closed 20 to 22 s after its first byte.
const TIMEOUT_CHECK_MS = 2_000

/**
 * An HTTP/1.1 server that streams each request to the sandbox port it names and the answer
 * back, with no buffering either way, and tunnels upgrades (WebSocket) byte for byte.
 */
export function createProxyServer(options: ProxyServerOptions): { server: Server; agent: Agent } {
  const gate = new SandboxGate(options.directory, options.domain, options.logger)
  const apiHost = `api.${hostnameOf(options.domain)}`
  const agent = new Agent({ keepAlive: true, keepAliveMsecs: 30_000 })
  const server = createServer({
    headersTimeout: SILENCE_MS,
    requestTimeout: REQUEST_MS,
    keepAliveTimeout: KEEP_ALIVE_MS,
    connectionsCheckingInterval: TIMEOUT_CHECK_MS,
  })
  closeSilentConnections(server, SILENCE_MS)
  const context = { gate, agent, options }
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (options.api !== undefined && hostnameOf(req.headers.host ?? '') === apiHost) {
      options.api(req, res)
      return
    }
    handleRequest(context, req, res).catch((error: unknown) => {
      options.logger.error({ err: error }, 'proxy request failed')
      res.destroy()
    })
  })
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    tunnelUpgrade(
      { gate, agent, domain: options.domain, logger: options.logger },
      req,
      socket,
      head,
    )
  })
  return { server, agent }
}

// Node's headersTimeout starts at a request's first byte, so it never closes a connection that
// sends nothing at all. This does: a new connection idle for `ms` is closed, and its first
// request hands the timing back to Node (keep-alive, headers and request timeouts).
function closeSilentConnections(server: Server, ms: number): void {
  server.on('connection', (socket: Socket) => socket.setTimeout(ms))
  const handOver = (req: IncomingMessage): void => {
    req.socket.setTimeout(0)
  }
  server.on('request', handOver)
  server.on('upgrade', handOver)
}

interface RequestContext {
  gate: SandboxGate
  agent: Agent
  options: ProxyServerOptions
}

async function handleRequest(
  context: RequestContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  let admission: Admission
  try {
    admission = await context.gate.admit({ url: req.url ?? '/', headers: req.headers })
  } catch (error: unknown) {
    sendError(res, asProxyError(error, context.options.logger))
    return
  }
  await forward(context, admission, req, res)
}

async function forward(
  context: RequestContext,
  { target, sandbox, path }: Admission,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const headers = upstreamHeaders(req.headers, {
    target,
    domain: context.options.domain,
    clientAddress: req.socket.remoteAddress,
    tls: isTls(req.socket),
    maskRequestHost: sandbox.maskRequestHost,
  })
  // A body that has all arrived (a small request comes in one read) leaves in one write with
  // the headers, and with its length, which servers that read no chunked body (Python's
  // http.server) need.
  const body = arrivedBody(req)
  if (body !== undefined && body.length > 0) headers['Content-Length'] = body.length
  // One still arriving, and of no stated length, goes on in chunks. Node's client chunks by
  // itself only for methods that usually carry a body: a DELETE, OPTIONS or GET would leave
  // unframed, and the sandbox's server would read its bytes as a request of their own.
  else if (body === undefined && req.headers['transfer-encoding'] !== undefined) {
    headers['Transfer-Encoding'] = 'chunked'
  }
  let upstream: Awaited<ReturnType<typeof openUpstream>>
  try {
    upstream = await openUpstream({
      agent: context.agent,
      address: sandbox.address,
      port: target.port,
      method: req.method ?? 'GET',
      path,
      headers,
      body,
      headersWithBody: req.readableLength > 0,
    })
  } catch (error: unknown) {
    context.options.logger.debug({ sandboxID: sandbox.sandboxID, err: error }, 'port not open')
    sendError(res, proxyErrors.portClosed(sandbox.sandboxID, target.port))
    return
  }
  upstream.once('response', (answer) => {
    // Trailers (gRPC-style status) arrive with the end of the answer; copy them before `pipe`
    // ends our response (listeners run in the order they were added).
    answer.once('end', () => {
      if (Object.keys(answer.trailers).length > 0) res.addTrailers(answer.trailers)
    })
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEndHeaders(answer.headers))
    coalesceWrites(answer, res)
    // A streamed answer (no length) gets its status line and headers at once: a server
    // stream's first message may be far off. A sized one leaves with its first bytes.
    if (answer.headers['content-length'] === undefined) res.flushHeaders()
    // `pipe`, with the failures wired by hand below: stream.pipeline's AbortController and the
    // DOMException it makes at every finish were a sixth of the proxy's CPU per request.
    answer.pipe(res)
    // An answer cut midway cuts the client's stream.
    answer.on('error', () => res.destroy())
  })
  // The upstream can fail at any point, also after the request body is sent: before an answer
  // the port counts as not open (§4.6), after it the client's stream is cut.
  upstream.on('error', (error) => {
    context.options.logger.debug({ sandboxID: sandbox.sandboxID, err: error }, 'upstream failed')
    sendError(res, proxyErrors.portClosed(sandbox.sandboxID, target.port))
  })
  // A client that goes away mid-stream takes the upstream request with it.
  res.once('close', () => {
    if (!res.writableFinished) upstream.destroy()
  })
  // Either side failing ends the other; `on`, as a stream may report more than one error.
  req.on('error', () => upstream.destroy())
  res.on('error', () => upstream.destroy())
  if (body === undefined) {
    coalesceWrites(req, upstream)
    req.pipe(upstream)
  }
}

/** The request's whole body when it has all arrived already; undefined while more is to come. */
function arrivedBody(req: IncomingMessage): Buffer | undefined {
  if (!req.complete) return undefined
  const chunks: Buffer[] = []
  for (let chunk: Buffer | null = req.read(); chunk !== null; chunk = req.read()) chunks.push(chunk)
  return Buffer.concat(chunks)
}

function sendError(res: ServerResponse, error: ProxyError): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const page = error.hasPage && isBrowserNavigation(res.req.headers)
  const body = page ? browserPage(error) : error.body
  res.writeHead(error.status, {
    'content-type': page ? 'text/html; charset=utf-8' : error.contentType,
    'content-length': Buffer.byteLength(body),
  })
  res.end(body)
}
