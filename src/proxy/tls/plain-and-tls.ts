import type { Server as HttpServer } from 'node:http'
import { createServer, type Server, type Socket } from 'node:net'
import { type SecureContextOptions, type TLSSocket, Server as TlsServer } from 'node:tls'

// A TLS connection opens with a handshake record, content type 22; an HTTP/1.1 request opens
// with a method name, always ASCII letters. One byte tells them apart.
const TLS_HANDSHAKE_RECORD = 0x16

/** What the port needs beyond the HTTP server it feeds. */
export interface PlainAndTlsOptions {
  /** The certificate and key for TLS; without them the port speaks plain HTTP only. */
  tls?: SecureContextOptions | undefined
  /** How long a new connection may stay silent, and a TLS handshake take, before it is closed. */
  silenceMs: number
}

/**
 * A listening socket that hands every connection to `http`, plain or after a TLS handshake as
 * its first byte says, so that one port serves both `http://` and `https://` URLs of the same
 * host: the SDK always uses `https://<port>-<id>.<domain>`, while a browser on this machine
 * reaches `http://` without trusting Sandbar's certificate authority.
 *
 * `http` never listens itself. It gets its connections here, and its `listening` event when
 * this port's fires, because Node starts its header and request timeouts on that event.
 */
export function listenPlainAndTls(http: HttpServer, options: PlainAndTlsOptions): Server {
  const tls =
    options.tls === undefined
      ? undefined
      : new TlsServer({
          ...options.tls,
          ALPNProtocols: ['http/1.1'],
          handshakeTimeout: options.silenceMs,
        })
  tls?.on('secureConnection', (socket: TLSSocket) => http.emit('connection', socket))
  // A failed handshake (an untrusted certificate, a port scan) is the client's business.
  tls?.on('tlsClientError', (_error, socket) => socket.destroy())
  // No Nagle: a streamed RPC's events are small writes, and each would otherwise wait for the
  // client's delayed ACK of the one before (~40 ms a command, measured through the SDK).
  const port = createServer({ noDelay: true }, (socket: Socket) => {
    // Until a server takes the socket over, its errors (a reset) only end it.
    const drop = (): void => {
      socket.destroy()
    }
    socket.on('error', drop)
    socket.setTimeout(options.silenceMs, drop)
    socket.once('readable', () => {
      const first: Buffer | null = socket.read(1)
      if (first === null) return
      socket.unshift(first)
      socket.off('error', drop)
      socket.setTimeout(0)
      if (first[0] !== TLS_HANDSHAKE_RECORD) http.emit('connection', socket)
      else if (tls !== undefined) tls.emit('connection', socket)
      else socket.destroy()
    })
  })
  port.on('listening', () => http.emit('listening'))
  return port
}
