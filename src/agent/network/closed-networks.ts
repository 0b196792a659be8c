import { ALL_TRAFFIC, normalisedNetworks } from './egress-policy.js'
import { covers, knownIPv4CIDR, overlaps, parseIPv4CIDR, withoutNetworks } from './ipv4.js'

/**
 * Destinations closed to sandboxes unless their allowOut names them: IANA's special-purpose
 * IPv4 networks that are not globally reachable (RFC 6890) — this network, RFC 1918 private
 * ranges, shared address space (CGNAT), loopback, link-local with the cloud metadata address
 * 169.254.169.254, IETF protocol assignments, benchmarking, multicast and reserved. The same
 * ranges as E2B's always-denied set (wire contract §4.5), which E2B never opens; Sandbar opens
 * them to a request that asks by name. The documentation ranges (TEST-NET-1/2/3) lead nowhere
 * on the internet and stay open like any public address.
 */
export const SPECIAL_PURPOSE_NETWORKS: readonly string[] = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4',
  '240.0.0.0/4',
]

/**
 * The elements of a sandbox's allow set, from its normalised allowOut and the closed networks.
 * An entry inside a closed network names it, so it opens; a wider entry (`0.0.0.0/0`,
 * `128.0.0.0/1`) opens only its part outside the closed networks, so no catch-all ever opens
 * the metadata address or the host's private neighbours by accident.
 */
export function openedNetworks(allow: readonly string[], closed: readonly string[]): string[] {
  const holes = closed.map(knownIPv4CIDR)
  const opened = allow.map(knownIPv4CIDR).flatMap((cidr) => {
    const named = holes.some((hole) => covers(hole, cidr))
    return named ? [cidr] : withoutNetworks(cidr, holes)
  })
  return normalisedNetworks(opened)
}

/**
 * A network no sandbox may reach whatever its allowOut says: the agent drops traffic to it
 * before any allow rule (nft-ruleset.ts). The api refuses allowOut entries overlapping one, so
 * the request fails with a clear message instead of silently opening nothing.
 */
export interface UnreachableNetwork {
  /** Normalised `a.b.c.d/n`: the pool, or one host address as a /32. */
  cidr: string
  kind: 'address pool' | 'host address'
}

/** An allowOut entry that overlaps an unreachable network, and which network. */
export interface UnreachableEntry {
  entry: string
  network: UnreachableNetwork
}

/**
 * The first allowOut entry overlapping an unreachable network. `ALL_TRAFFIC` passes: it is the
 * SDK's word for "everything", never a request for the pool or the host, and what it opens is
 * bounded by the agent's rules. Entries that are not IPv4 (domains) are someone else's check.
 */
export function findUnreachableEntry(
  allowOut: readonly string[],
  networks: readonly UnreachableNetwork[],
): UnreachableEntry | undefined {
  for (const entry of allowOut) {
    const cidr = parseIPv4CIDR(entry.trim())
    if (cidr === undefined || entry.trim() === ALL_TRAFFIC) continue
    const network = networks.find((candidate) => overlaps(cidr, knownIPv4CIDR(candidate.cidr)))
    if (network !== undefined) return { entry, network }
  }
  return undefined
}
