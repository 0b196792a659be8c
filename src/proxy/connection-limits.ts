import { isIPv6, type Server, type Socket } from 'node:net'

/** How many client connections the proxy holds at once. */
export interface ConnectionLimits {
  /** All clients together. */
  total: number
  /** One client address (one /64 for IPv6, which a single host usually has whole). */
  perClient: number
}

// Each proxied connection holds two sockets (client and sandbox), so 4096 connections take
// about 8k file descriptors: well inside the service's RLIMIT_NOFILE, which sandboxes, logs and
// the store share. No real user comes near either cap: a browser holds at most 256 sockets
// (Chrome's per-profile pool), and the SDK's pools at most 200 RPC + 10 REST connections per
// origin (wire contract §3.1), so one address may hold four SDK processes' full pools, and no
// single address more than a quarter of the total. Behind a load balancer every connection
// comes from its address: raise `perClient` to `total` there.
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { total: 4096, perClient: 1024 }

/**
 * Holds `server` to `limits`: a connection past either cap is closed as it arrives, before
 * anything is read from it. The total is Node's own `maxConnections`, which counts upgraded
 * (WebSocket) connections too.
 */
export function limitConnections(server: Server, limits: ConnectionLimits): void {
  server.maxConnections = limits.total
  const held = new Map<string, number>()
  server.on('connection', (socket: Socket) => {
    const client = clientKey(socket.remoteAddress ?? '')
    const count = held.get(client) ?? 0
    if (count >= limits.perClient) {
      socket.destroy()
      return
    }
    held.set(client, count + 1)
    socket.once('close', () => {
      const left = (held.get(client) ?? 1) - 1
      if (left === 0) held.delete(client)
      else held.set(client, left)
    })
  })
}

/** The address a cap counts by: IPv4 as is (also IPv4-mapped), IPv6 by its /64 prefix. */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped?.[1] !== undefined) return mapped[1]
  if (!isIPv6(address)) return address
  const [head = '', tail = ''] = address.split('%')[0]?.split('::') ?? []
  const left = head === '' ? [] : head.split(':')
  const right = tail === '' ? [] : tail.split(':')
  const zeros: string[] = Array(8 - left.length - right.length).fill('0')
  const groups = [...left, ...zeros, ...right].slice(0, 4)
  return `${groups.map((group) => Number.parseInt(group, 16).toString(16)).join(':')}::/64`
}
