import { once } from 'node:events'
import type { RequestListener } from 'node:http'
import type { Socket } from 'node:net'
import type { SecureContextOptions } from 'node:tls'
import type { Logger } from '../logger.js'
import {
  type ConnectionLimits,
  DEFAULT_CONNECTION_LIMITS,
  limitConnections,
} from './connection-limits.js'
import { createProxyServer, SILENCE_MS } from './proxy-server.js'
import { listenPlainAndTls } from './tls/plain-and-tls.js'

export type { ConnectionLimits } from './connection-limits.js'
export { hostnameOf } from './route-target.js'
export { type CertificateFiles, ensureLocalCertificate } from './tls/local-authority.js'

/** A sandbox as the proxy sees it: where it listens and who may reach it. */
export interface ProxiedSandbox {
  sandboxID: string
  /** The sandbox's own IP address; every port the client names is reached there. */
  address: string
  state: 'running' | 'paused'
  /** Set when the sandbox is private (`allowPublicTraffic: false`, wire contract §4.6). */
  trafficAccessToken?: string
  /** Set when the sandbox is secure; guards auto-resume through the envd port (§4.4). */
  envdAccessToken?: string
  /** Traffic to a paused sandbox resumes it (§4.4). */
  autoResume: boolean
  /** The `Host` its user ports see instead of the client's, `${PORT}` filled in (§4.6). */
  maskRequestHost?: string | undefined
}

/** Where the proxy finds sandboxes and how it wakes a paused one; the store and agent back it. */
export interface SandboxDirectory {
  /** The sandbox, or undefined when it does not exist (never created, or killed). */
  lookup(sandboxID: string): Promise<ProxiedSandbox | undefined>
  /** Resumes a paused sandbox and returns it running. */
  resume(sandboxID: string): Promise<ProxiedSandbox>
}

/** What a proxy needs. */
export interface ProxyOptions {
  /**
   * The sandbox domain, as clients write it (a port may follow): hosts are
   * `<port>-<sandboxID>.<domain>`, `sandbox.<domain>` and `api.<domain>`.
   */
  domain: string
  directory: SandboxDirectory
  logger: Logger
  /** Caps on concurrent client connections; `DEFAULT_CONNECTION_LIMITS` when absent. */
  connectionLimits?: ConnectionLimits | undefined
  /** A certificate for `*.<domain>`: the port then speaks HTTPS beside plain HTTP. */
  tls?: Pick<SecureContextOptions, 'cert' | 'key'> | undefined
  /**
   * The E2B API, for requests to `api.<domain>`: an SDK given only `E2B_DOMAIN` (every 1.x
   * and early 2.x release) calls `https://api.<domain>` and `https://<port>-<id>.<domain>`.
   */
  api?: RequestListener | undefined
}

/** The proxy role: routes client traffic to sandbox ports (wire contract §4.6). */
export interface SandboxProxy {
  /** Starts listening; resolves with the bound port (useful with port 0). */
  listen(port: number, host: string): Promise<number>
  /** Stops accepting, cuts open connections and tunnels, and frees upstream sockets. */
  close(): Promise<void>
}

/** Creates the proxy; it does nothing until `listen`. */
export function createProxy(options: ProxyOptions): SandboxProxy {
  const { server: http, agent } = createProxyServer(options)
  const server = listenPlainAndTls(http, { tls: options.tls, silenceMs: SILENCE_MS })
  limitConnections(server, options.connectionLimits ?? DEFAULT_CONNECTION_LIMITS)
  // Every client socket, including upgraded ones the server no longer counts as HTTP
  // connections, so that close() can cut WebSocket tunnels too.
  const sockets = new Set<Socket>()
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  return {
    async listen(port, host) {
      server.listen(port, host)
      await once(server, 'listening')
      const address = server.address()
      if (address === null || typeof address === 'string') throw new Error('proxy is not on TCP')
      options.logger.info({ port: address.port, host }, 'proxy listening')
      return address.port
    },
    async close() {
      const closed = new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)))
      })
      for (const socket of sockets) socket.destroy()
      agent.destroy()
      await closed
    },
  }
}
