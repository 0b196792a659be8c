import bindings from 'bindings'

/** A TCP socket in the LISTEN state in envd's network namespace. */
export interface ListeningSocket {
  /** Local address: dotted IPv4 (also for IPv4-mapped IPv6), or RFC 5952 IPv6. */
  address: string
  port: number
}

interface ListeningSocketsAddon {
  /** The namespace's listening TCP sockets, addresses as their bytes (listening-sockets.c). */
  listeningTcpSockets(): { address: Uint8Array; port: number }[]
  /** Calls `changed` as watchListeningSockets says; returns what stops it. */
  watchListeningTcpSockets(intervalMs: number, changed: () => void): () => void
}

const addon: ListeningSocketsAddon = bindings('listening_sockets.node')

/** The TCP sockets listening in this network namespace, IPv4 and IPv6, from the kernel. */
export function listeningSockets(): ListeningSocket[] {
  return addon
    .listeningTcpSockets()
    .map(({ address, port }) => ({ address: formatAddress(address), port }))
}

/**
 * Calls `changed` once soon, then each time the namespace's listening sockets differ from how
 * they were `intervalMs` before, or its IPv4 addresses from how they were at the last of their
 * looks (every tenth interval): a thread of the addon looks, so an idle envd is not woken to
 * find nothing new. Never keeps the process alive; returns what stops it.
 */
export function watchListeningSockets(intervalMs: number, changed: () => void): () => void {
  return addon.watchListeningTcpSockets(intervalMs, changed)
}

/**
 * An address's bytes in network order as text: dotted IPv4, `::ffff:a.b.c.d` (an IPv4
 * address on a dual-stack socket) as dotted IPv4 too, other IPv6 in RFC 5952 form.
 */
export function formatAddress(bytes: Uint8Array): string {
  if (bytes.length === 4) return [...bytes].join('.')
  if (bytes.length !== 16) throw new Error(`an address of ${bytes.length} bytes`)
  if (bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return [...bytes.subarray(12)].join('.')
  }
  const groups: string[] = []
  for (let i = 0; i < 16; i += 2)
    groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16))
  return compressIPv6(groups)
}

/** RFC 5952 form: the longest run of two or more zero groups becomes `::`. */
function compressIPv6(groups: string[]): string {
  let bestStart = -1
  let bestLength = 1
  for (let start = 0; start < groups.length; start++) {
    let length = 0
    while (groups[start + length] === '0') length++
    if (length > bestLength) {
      bestStart = start
      bestLength = length
    }
  }
  if (bestStart < 0) return groups.join(':')
  const head = groups.slice(0, bestStart).join(':')
  const tail = groups.slice(bestStart + bestLength).join(':')
  return `${head}::${tail}`
}
