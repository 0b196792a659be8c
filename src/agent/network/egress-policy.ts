import { covers, formatIPv4CIDR, type IPv4CIDR, parseIPv4CIDR } from './ipv4.js'
import type { EgressPolicy } from './network.js'

/** A policy whose entries are all valid IPv4 networks, ready for the nft sets. */
export interface ParsedEgressPolicy {
  /** Normalised `a.b.c.d/n`, without entries another entry already covers. */
  allow: string[]
  deny: string[]
}

export type EgressList = 'allowOut' | 'denyOut'

/** The SDK's `ALL_TRAFFIC` (wire contract §1.4): every IPv4 destination. */
export const ALL_TRAFFIC = '0.0.0.0/0'

/**
 * An allowOut/denyOut entry that is not an IPv4 address or CIDR. For denyOut the message is the
 * wire contract's 400 text (§1.4): `invalid denied CIDR <x>`.
 */
export class EgressPolicyError extends Error {
  constructor(
    readonly list: EgressList,
    readonly entry: string,
  ) {
    super(
      list === 'denyOut'
        ? `invalid denied CIDR ${entry}`
        : `invalid allowed CIDR ${entry}: allowOut entries must be IPv4 addresses or CIDRs`,
    )
  }
}

/**
 * Validates both lists. Wire contract §4.5 and §1.4: bare IP → /32; denyOut must be IPs or
 * CIDRs, not the unspecified address except `0.0.0.0/0`. Domains in allowOut need E2B's
 * userspace proxy, which Sandbar does not have, so they are refused rather than ignored.
 */
export function parseEgressPolicy(policy: EgressPolicy): ParsedEgressPolicy {
  return {
    allow: parseList('allowOut', policy.allowOut),
    deny: parseList('denyOut', policy.denyOut),
  }
}

function parseList(list: EgressList, entries: readonly string[]): string[] {
  return normalisedNetworks(entries.map((entry) => parseEntry(list, entry)))
}

/** Normalised CIDRs for one nft interval set: sorted, none inside another. */
export function normalisedNetworks(cidrs: readonly IPv4CIDR[]): string[] {
  return withoutCovered(cidrs).map(formatIPv4CIDR)
}

function parseEntry(list: EgressList, entry: string): IPv4CIDR {
  const cidr = parseIPv4CIDR(entry.trim())
  if (cidr === undefined) throw new EgressPolicyError(list, entry)
  if (cidr.address === 0 && cidr.prefixLength !== 0) throw new EgressPolicyError(list, entry)
  return cidr
}

/**
 * nft refuses overlapping elements in one interval set ("conflicting intervals specified",
 * nft 1.0.6), so an entry inside another entry (or a duplicate) is dropped: same coverage.
 */
function withoutCovered(cidrs: readonly IPv4CIDR[]): IPv4CIDR[] {
  const widestFirst = [...cidrs].sort(
    (a, b) => a.prefixLength - b.prefixLength || a.address - b.address,
  )
  const kept: IPv4CIDR[] = []
  for (const cidr of widestFirst) {
    if (!kept.some((outer) => covers(outer, cidr))) kept.push(cidr)
  }
  return kept.sort((a, b) => a.address - b.address || a.prefixLength - b.prefixLength)
}
