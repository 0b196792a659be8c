import type { ListeningSocket } from './listening-sockets.js'

/** One forward: a listener on an external address, relaying to the same port on loopback. */
export interface ForwardEndpoint {
  /** External address the forward listens on. */
  address: string
  port: number
  /** The loopback address the service listens on: `127.0.0.1`, else `::1`. */
  target: string
}

export interface ForwardPlanInput {
  /** Every listening TCP socket of the sandbox. */
  sockets: readonly ListeningSocket[]
  /** The sandbox's non-loopback IPv4 addresses. */
  externalAddresses: readonly string[]
  /** Ports never forwarded: envd's own (wire contract §3.1: 49983). */
  reservedPorts: ReadonlySet<number>
  /** Keys (`forwardKey`) of the forwards already open, whose own listeners the scan sees. */
  open: ReadonlySet<string>
}

const WILDCARDS = new Set(['0.0.0.0', '::'])

/** Identifies a forward by the external endpoint it listens on. */
export function forwardKey(endpoint: { address: string; port: number }): string {
  return `${endpoint.address}:${endpoint.port}`
}

/**
 * The forwards that should exist now (wire contract §3.1: a service bound only to
 * `127.0.0.1`/localhost is forwarded to the external interface). A port bound on a wildcard
 * address is reachable already and is left alone, as is an external endpoint that a listener
 * other than our own forward holds.
 */
export function planForwards(input: ForwardPlanInput): ForwardEndpoint[] {
  const byPort = new Map<number, Set<string>>()
  for (const { address, port } of input.sockets) {
    const addresses = byPort.get(port) ?? new Set<string>()
    addresses.add(address)
    byPort.set(port, addresses)
  }
  const plan: ForwardEndpoint[] = []
  for (const [port, addresses] of byPort) {
    if (input.reservedPorts.has(port)) continue
    if ([...addresses].some((address) => WILDCARDS.has(address))) continue
    const target = loopbackTarget(addresses)
    if (target === undefined) continue
    for (const address of input.externalAddresses) {
      const taken = addresses.has(address) && !input.open.has(forwardKey({ address, port }))
      if (!taken) plan.push({ address, port, target })
    }
  }
  return plan
}

/**
 * Whether any plan could forward: a port other than the reserved ones has a loopback listener.
 * Most scans find none, and need not read the interfaces' addresses.
 */
export function anyLoopbackService(
  sockets: readonly ListeningSocket[],
  reservedPorts: ReadonlySet<number>,
): boolean {
  return sockets.some(
    ({ address, port }) => LOOPBACKS.includes(address) && !reservedPorts.has(port),
  )
}

/** Loopback addresses in the order a forward prefers them as its target. */
const LOOPBACKS = ['127.0.0.1', '::1']

function loopbackTarget(addresses: ReadonlySet<string>): string | undefined {
  return LOOPBACKS.find((loopback) => addresses.has(loopback))
}
