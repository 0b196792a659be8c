import type { Agent, IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { Logger } from '../logger.js'
import { isTls, upstreamHeaders } from './forward-headers.js'
import { asProxyError, type ProxyError, proxyErrors, rawResponse } from './proxy-errors.js'
import type { Admission, SandboxGate } from './sandbox-gate.js'
import { openUpstream } from './upstream-request.js'

/** What an upgrade needs from the proxy server. */
export interface UpgradeContext {
  gate: SandboxGate
  agent: Agent
  domain: string
  logger: Logger
}

/**
 * Carries an `Upgrade` request (WebSocket) to the sandbox port. Once the sandbox answers 101,
 * its handshake is written to the client and the two sockets are piped into each other; any
 * other answer is relayed as a plain response and the connection closed.
 */
export function tunnelUpgrade(
  context: UpgradeContext,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  socket.on('error', () => socket.destroy())
  context.gate
    .admit({ url: req.url ?? '/', headers: req.headers })
    .then((admission) => connectUpgrade(context, admission, req, socket, head))
    .catch((error: unknown) => {
      refuse(socket, asProxyError(error, context.logger))
    })
}

async function connectUpgrade(
  context: UpgradeContext,
  { target, sandbox, path }: Admission,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  const headers = upstreamHeaders(req.headers, {
    target,
    domain: context.domain,
    clientAddress: req.socket.remoteAddress,
    tls: isTls(req.socket),
    maskRequestHost: sandbox.maskRequestHost,
  })
  // The upgrade itself is hop-by-hop, so it is restated for the upstream hop.
  headers.Connection = 'Upgrade'
  headers.Upgrade = req.headers.upgrade
  const portClosed = proxyErrors.portClosed(sandbox.sandboxID, target.port)
  let upstream: Awaited<ReturnType<typeof openUpstream>>
  try {
    upstream = await openUpstream({
      agent: context.agent,
      address: sandbox.address,
      port: target.port,
      method: req.method ?? 'GET',
      path,
      headers,
    })
  } catch {
    refuse(socket, portClosed)
    return
  }
  upstream.on('error', () => refuse(socket, portClosed))
  upstream.once('upgrade', (answer: IncomingMessage, upstreamSocket: Socket, upstreamHead) => {
    socket.write(handshake(answer))
    if (upstreamHead.length > 0) socket.write(upstreamHead)
    if (head.length > 0) upstreamSocket.write(head)
    splice(socket, upstreamSocket)
  })
  upstream.once('response', (answer: IncomingMessage) => {
    // The sandbox declined the upgrade: relay its answer as is, then close.
    socket.write(handshake(answer))
    answer.pipe(socket)
  })
  socket.once('close', () => upstream.destroy())
  upstream.end()
}

// The status line and headers as the sandbox sent them, raw, so that `Sec-WebSocket-Accept`,
// the chosen subprotocol and extensions reach the client unchanged.
function handshake(answer: IncomingMessage): string {
  const lines = [`HTTP/1.1 ${answer.statusCode ?? 502} ${answer.statusMessage ?? ''}`]
  for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) {
    lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`)
  }
  return `${lines.join('\r\n')}\r\n\r\n`
}

function splice(client: Duplex, sandbox: Socket): void {
  const closeBoth = (): void => {
    client.destroy()
    sandbox.destroy()
  }
  sandbox.on('error', closeBoth)
  client.on('close', closeBoth)
  sandbox.on('close', closeBoth)
  client.pipe(sandbox)
  sandbox.pipe(client)
}

function refuse(socket: Duplex, error: ProxyError): void {
  if (socket.destroyed) return
  socket.end(rawResponse(error))
}
