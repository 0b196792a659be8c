import net from 'node:net'
import os from 'node:os'
import { errnoCode } from '../../errno-code.js'
import type { Logger } from '../../logger.js'
import {
  anyLoopbackService,
  type ForwardEndpoint,
  forwardKey,
  planForwards,
} from './forward-plan.js'
import { listeningSockets, watchListeningSockets } from './listening-sockets.js'

/** Wire contract §3.1: envd looks at the listening sockets every second. */
export const SCAN_INTERVAL_MS = 1_000

export interface PortForwarderOptions {
  logger: Logger
  /** Ports never forwarded (envd's own). */
  reservedPorts: readonly number[]
  intervalMs?: number
}

/** A running forwarder; `stop` closes every forward and its connections. */
export interface PortForwarder {
  stop(): Promise<void>
}

interface Forward {
  endpoint: ForwardEndpoint
  server: net.Server
  connections: Set<net.Socket>
}

/**
 * Wire contract §3.1: a service listening only on localhost stays reachable from outside the
 * sandbox. Every scan opens a relay on each external IPv4 address for such a port, and closes
 * the relay once the service stops listening. E2B runs `socat` per port; here it is a `net`
 * server in envd, so the rootfs needs no `socat`.
 */
export function startPortForwarder(options: PortForwarderOptions): PortForwarder {
  return new LocalhostForwarder(options)
}

class LocalhostForwarder implements PortForwarder {
  private readonly logger: Logger
  private readonly reservedPorts: ReadonlySet<number>
  private readonly forwards = new Map<string, Forward>()
  /** Endpoints whose last failure was already logged, so a lasting one logs once. */
  private readonly failed = new Set<string>()
  private readonly events: ForwardEvents = {
    listening: (forward) => this.opened(forward),
    error: (forward, error) => this.failedToServe(forward, error),
  }
  private readonly intervalMs: number
  private readonly stopWatching: () => void
  /** A retry of the forwards that failed, which no change of the sockets may bring. */
  private retry: NodeJS.Timeout | undefined
  private stopped = false

  constructor(options: PortForwarderOptions) {
    this.logger = options.logger
    this.reservedPorts = new Set(options.reservedPorts)
    this.intervalMs = options.intervalMs ?? SCAN_INTERVAL_MS
    this.stopWatching = watchListeningSockets(this.intervalMs, () => this.scanLogged())
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.stopWatching()
    clearTimeout(this.retry)
    const closing = [...this.forwards.values()].map(closeForward)
    this.forwards.clear()
    await Promise.all(closing)
  }

  private scanLogged(): void {
    try {
      this.scan()
    } catch (error) {
      this.logger.warn({ err: error }, 'port scan failed')
    }
  }

  /** One scan: opens the forwards the plan wants and closes those it no longer does. */
  private scan(): void {
    const sockets = listeningSockets()
    const plan = planForwards({
      sockets,
      externalAddresses: anyLoopbackService(sockets, this.reservedPorts)
        ? externalIPv4Addresses()
        : [],
      reservedPorts: this.reservedPorts,
      open: new Set(this.forwards.keys()),
    })
    const wanted = new Map(plan.map((endpoint) => [forwardKey(endpoint), endpoint]))
    for (const [key, forward] of this.forwards) {
      if (wanted.has(key)) continue
      this.forwards.delete(key)
      void closeForward(forward)
      this.logger.info({ ...forward.endpoint }, 'port forward closed')
    }
    for (const key of this.failed) if (!wanted.has(key)) this.failed.delete(key)
    for (const [key, endpoint] of wanted) {
      if (!this.forwards.has(key)) this.forwards.set(key, openForward(endpoint, this.events))
    }
  }

  private opened(forward: Forward): void {
    this.failed.delete(forwardKey(forward.endpoint))
    this.logger.info({ ...forward.endpoint }, 'port forward opened')
  }

  /** Drops a forward that could not listen (or stopped accepting); a scan retries it soon. */
  private failedToServe(forward: Forward, error: Error): void {
    const key = forwardKey(forward.endpoint)
    if (this.forwards.get(key) === forward) this.forwards.delete(key)
    void closeForward(forward)
    this.retrySoon()
    // A listener that appeared between the scan and the bind: normal, and quiet.
    if (errnoCode(error) === 'EADDRINUSE' || this.failed.has(key)) return
    this.failed.add(key)
    this.logger.warn({ ...forward.endpoint, err: error }, 'port forward failed')
  }

  private retrySoon(): void {
    if (this.stopped || this.retry !== undefined) return
    this.retry = setTimeout(() => {
      this.retry = undefined
      this.scanLogged()
    }, this.intervalMs)
    // The forwarder never keeps envd's process alive on its own.
    this.retry.unref()
  }
}

interface ForwardEvents {
  listening(forward: Forward): void
  error(forward: Forward, error: Error): void
}

function openForward(endpoint: ForwardEndpoint, events: ForwardEvents): Forward {
  const connections = new Set<net.Socket>()
  // Half-open on both legs, so a client's FIN reaches the service, which may still answer.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    relay(client, endpoint, connections)
  })
  const forward: Forward = { endpoint, server, connections }
  server.once('listening', () => events.listening(forward))
  server.on('error', (error) => events.error(forward, error))
  server.listen({ host: endpoint.address, port: endpoint.port })
  return forward
}

/** Pipes one client connection to the service on loopback, both ways, until either side ends. */
function relay(client: net.Socket, endpoint: ForwardEndpoint, connections: Set<net.Socket>): void {
  const upstream = net.connect({ host: endpoint.target, port: endpoint.port, allowHalfOpen: true })
  for (const [socket, other] of [
    [client, upstream],
    [upstream, client],
  ] as const) {
    connections.add(socket)
    socket.on('error', () => other.destroy())
    socket.once('close', () => {
      connections.delete(socket)
      other.destroy()
    })
    socket.pipe(other)
  }
}

function closeForward(forward: Forward): Promise<void> {
  const closed = new Promise<void>((resolve) => forward.server.close(() => resolve()))
  for (const socket of forward.connections) socket.destroy()
  return closed
}

/** The sandbox's external interface addresses: every non-internal IPv4 address. */
function externalIPv4Addresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flatMap((addresses) => addresses ?? [])
    .filter((info) => !info.internal && info.family === 'IPv4')
    .map((info) => info.address)
}
