/** An IPv4 network: its address as an unsigned 32-bit number and its prefix length. */
export interface IPv4CIDR {
  address: number
  prefixLength: number
}

const OCTET = /^(0|[1-9][0-9]{0,2})$/
const PREFIX_LENGTH = /^(0|[1-9][0-9]?)$/

/** Parses a dotted quad (`10.0.0.1`); anything else, leading zeros included, is undefined. */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  let value = 0
  for (const part of parts) {
    if (!OCTET.test(part)) return undefined
    const octet = Number(part)
    if (octet > 255) return undefined
    value = value * 256 + octet
  }
  return value
}

export function formatIPv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.')
}

/**
 * Parses `a.b.c.d/n` or a bare address (→ `/32`). Host bits are cleared, as Go's
 * `net.ParseCIDR` does for E2B's lists, so `10.1.2.3/8` means `10.0.0.0/8`.
 */
export function parseIPv4CIDR(text: string): IPv4CIDR | undefined {
  const [addressText = '', lengthText, ...rest] = text.split('/')
  if (rest.length > 0) return undefined
  const address = parseIPv4(addressText)
  if (address === undefined) return undefined
  if (lengthText === undefined) return { address, prefixLength: 32 }
  if (!PREFIX_LENGTH.test(lengthText)) return undefined
  const prefixLength = Number(lengthText)
  if (prefixLength > 32) return undefined
  return { address: networkOf(address, prefixLength), prefixLength }
}

/** A CIDR the program itself holds (constants, the pool, interface addresses); throws if not one. */
export function knownIPv4CIDR(text: string): IPv4CIDR {
  const cidr = parseIPv4CIDR(text)
  if (cidr === undefined) throw new RangeError(`not an IPv4 CIDR: ${text}`)
  return cidr
}

export function formatIPv4CIDR(cidr: IPv4CIDR): string {
  return `${formatIPv4(cidr.address)}/${cidr.prefixLength}`
}

/** Number of addresses in the network. */
export function sizeOf(cidr: IPv4CIDR): number {
  return 2 ** (32 - cidr.prefixLength)
}

/** Whether `inner` lies wholly inside `outer`. */
export function covers(outer: IPv4CIDR, inner: IPv4CIDR): boolean {
  return (
    outer.prefixLength <= inner.prefixLength &&
    networkOf(inner.address, outer.prefixLength) === outer.address
  )
}

/** Whether the two networks share any address (CIDRs either nest or are disjoint). */
export function overlaps(a: IPv4CIDR, b: IPv4CIDR): boolean {
  return covers(a, b) || covers(b, a)
}

/**
 * `cidr` without the `holes` inside it, as the fewest CIDRs: halves are kept whole once no hole
 * lies in them, and a hole is dropped whole. Holes wider than `cidr` remove all of it.
 */
export function withoutNetworks(cidr: IPv4CIDR, holes: readonly IPv4CIDR[]): IPv4CIDR[] {
  const inside = holes.filter((hole) => overlaps(cidr, hole))
  if (inside.length === 0) return [cidr]
  if (inside.some((hole) => covers(hole, cidr))) return []
  const prefixLength = cidr.prefixLength + 1
  const half = sizeOf({ address: 0, prefixLength })
  return [cidr.address, cidr.address + half].flatMap((address) =>
    withoutNetworks({ address, prefixLength }, inside),
  )
}

function networkOf(address: number, prefixLength: number): number {
  const size = 2 ** (32 - prefixLength)
  return address - (address % size)
}
