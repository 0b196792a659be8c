import { BUILD_VETH_MARKER, nftTableName, PREFIX_PATTERN } from '../host-names.js'
import type { ParsedEgressPolicy } from './egress-policy.js'
import { formatIPv4CIDR, parseIPv4CIDR } from './ipv4.js'

/**
 * nft scripts for `nft -f -`, each applied as one atomic transaction. Only checked values reach
 * the text: the prefix (PREFIX_PATTERN), host veth names (`<prefix>h` + 8 hex digits, or `x` + 7
 * for build sandboxes, as hostNames makes them), interface names read from `ip -j route`, and normalised IPv4 CIDRs.
 */

export interface TableConfig {
  prefix: string
  /** The address pool, source of masqueraded traffic. */
  poolCIDR: string
  masquerade: boolean
  /**
   * Build sandboxes leave through the uplinks, masqueraded, even when other sandboxes may not
   * (`masquerade` off): template steps install from package registries.
   */
  masqueradeBuilds: boolean
  /** Interfaces of the host's default routes (`ip -j route show default`). */
  uplinks: readonly string[]
  /** Normalised CIDRs closed to sandboxes unless their allowOut names them (closed-networks.ts). */
  closed: readonly string[]
}

/** The nft objects of one sandbox, all named after its host veth. */
export interface SandboxObjects {
  chain: string
  allowSet: string
  denySet: string
}

/** Verdict map: host veth name → `jump <sandbox chain>` (host-facts: `iifname vmap`). */
export const SANDBOX_MAP = 'sandboxes'

/** The table's set of networks closed by default, shared by every sandbox chain. */
export const CLOSED_SET = 'closed'

const INTERVAL_SET = '{ type ipv4_addr; flags interval; }'

const UPLINK_NAME = /^[A-Za-z0-9_.-]{1,15}$/

export function sandboxObjects(hostVeth: string): SandboxObjects {
  return {
    chain: `sandbox_${hostVeth}`,
    allowSet: `allow_${hostVeth}`,
    denySet: `deny_${hostVeth}`,
  }
}

/**
 * The agent's table and base chains. Re-running it is safe: `add` leaves existing objects and
 * their contents alone, and each base chain is flushed and refilled in the same transaction.
 */
export function tableScript(config: TableConfig): string {
  const t = tableRef(config.prefix)
  const sandboxes = `"${checkedPrefix(config.prefix)}h*"`
  const builds = `"${config.prefix}h${BUILD_VETH_MARKER}*"`
  const uplinks = config.uplinks.map((name) => `"${checkedUplink(name)}"`).join(', ')
  const pool = checkedCIDR(config.poolCIDR)
  return lines([
    `add table ${t}`,
    `add map ${t} ${SANDBOX_MAP} { type ifname : verdict; }`,
    `add set ${t} ${CLOSED_SET} ${INTERVAL_SET}`,
    ...setContents(config.prefix, CLOSED_SET, config.closed),
    `add chain ${t} input { type filter hook input priority filter; policy accept; }`,
    `flush chain ${t} input`,
    // host-facts § Networking: sandboxes never open connections to the host, whatever their
    // allowOut says (no allow rule is consulted on this path). Replies to the host's own
    // connections (the agent and proxy calling envd) are established.
    `add rule ${t} input iifname ${sandboxes} ct state established,related accept`,
    `add rule ${t} input iifname ${sandboxes} drop`,
    `add chain ${t} output { type filter hook output priority filter; policy accept; }`,
    `flush chain ${t} output`,
    // Only the service opens connections to sandboxes: the agent and the proxy run as root,
    // and the proxy is where the traffic token and envd's access checks are made. Any other
    // host user (and a user's slirp4netns) would skip them; IPv6 link-local addresses on the
    // veths are covered too, as the match is the interface. Kernel replies (RST, ICMP) to a
    // flow are established or related; other users' netns arrive by forward, closed below.
    `add rule ${t} output oifname ${sandboxes} ct state established,related accept`,
    `add rule ${t} output oifname ${sandboxes} meta skuid 0 accept`,
    `add rule ${t} output oifname ${sandboxes} drop`,
    `add chain ${t} forward { type filter hook forward priority filter; policy accept; }`,
    `flush chain ${t} forward`,
    // Sandboxes never reach each other, before any state or allow rule: not through their
    // veths, and not through a pool address routed elsewhere (an unused slot's address
    // follows the default route).
    `add rule ${t} forward iifname ${sandboxes} oifname ${sandboxes} drop`,
    `add rule ${t} forward iifname ${sandboxes} ip daddr ${pool} drop`,
    // The allow/deny sets are IPv4 (wire contract §4.5); IPv6 from a sandbox goes nowhere.
    `add rule ${t} forward iifname ${sandboxes} meta nfproto ipv6 drop`,
    ...uplinkRules(t, sandboxes, builds, config, uplinks),
    `add rule ${t} forward iifname ${sandboxes} ct state established,related accept`,
    `add rule ${t} forward oifname ${sandboxes} ct state established,related accept`,
    `add rule ${t} forward iifname ${sandboxes} iifname vmap @${SANDBOX_MAP}`,
    // A sandbox veth without a chain (mid-setup, or left behind) gets nothing.
    `add rule ${t} forward iifname ${sandboxes} drop`,
    // New connections towards a sandbox from another host interface: ingress goes through
    // the host (proxy → envd), never by routing into the sandbox network.
    `add rule ${t} forward oifname ${sandboxes} drop`,
    `add chain ${t} postrouting { type nat hook postrouting priority srcnat; policy accept; }`,
    `flush chain ${t} postrouting`,
    ...(uplinks === ''
      ? []
      : config.masquerade
        ? [`add rule ${t} postrouting ip saddr ${pool} oifname { ${uplinks} } masquerade`]
        : config.masqueradeBuilds
          ? [
              `add rule ${t} postrouting iifname ${builds} ip saddr ${pool} oifname { ${uplinks} } masquerade`,
            ]
          : []),
  ])
}

/**
 * Where sandbox traffic may leave the host. Masqueraded, only through an uplink: never into a
 * bridge, a VPN or another host-local network. Without masquerade, never through an uplink:
 * the pool's addresses must not reach the host's real network — except, with
 * `masqueradeBuilds`, build sandboxes', which are masqueraded and held to the uplinks.
 */
function uplinkRules(
  t: string,
  sandboxes: string,
  builds: string,
  config: TableConfig,
  uplinks: string,
): string[] {
  if (uplinks === '')
    return config.masquerade ? [`add rule ${t} forward iifname ${sandboxes} drop`] : []
  if (config.masquerade) {
    return [`add rule ${t} forward iifname ${sandboxes} oifname != { ${uplinks} } drop`]
  }
  if (config.masqueradeBuilds) {
    return [
      `add rule ${t} forward iifname ${builds} oifname != { ${uplinks} } drop`,
      `add rule ${t} forward iifname ${sandboxes} iifname != ${builds} oifname { ${uplinks} } drop`,
    ]
  }
  return [`add rule ${t} forward iifname ${sandboxes} oifname { ${uplinks} } drop`]
}

/**
 * A sandbox's sets, chain and map element. The base forward chain has already dropped traffic
 * to other sandboxes and the host, so nothing here can open them. Allow is checked first (wire
 * contract §4.5: allow beats deny; its elements come from closed-networks.ts `openedNetworks`),
 * then the networks closed by default, then deny; the rest is accepted.
 */
export function sandboxScript(
  prefix: string,
  hostVeth: string,
  policy: ParsedEgressPolicy,
): string {
  const t = tableRef(prefix)
  const veth = checkedHostVeth(prefix, hostVeth)
  const { chain, allowSet, denySet } = sandboxObjects(veth)
  return lines([
    `add set ${t} ${allowSet} ${INTERVAL_SET}`,
    `add set ${t} ${denySet} ${INTERVAL_SET}`,
    ...fillSets(prefix, veth, policy),
    `add chain ${t} ${chain}`,
    `flush chain ${t} ${chain}`,
    `add rule ${t} ${chain} ip daddr @${allowSet} accept`,
    `add rule ${t} ${chain} ip daddr @${CLOSED_SET} drop`,
    `add rule ${t} ${chain} ip daddr @${denySet} drop`,
    `add rule ${t} ${chain} accept`,
    `add element ${t} ${SANDBOX_MAP} { "${veth}" : jump ${chain} }`,
  ])
}

/** Replaces both sets in one transaction: no moment where neither list applies. */
export function updateScript(prefix: string, hostVeth: string, policy: ParsedEgressPolicy): string {
  return lines(fillSets(prefix, checkedHostVeth(prefix, hostVeth), policy))
}

/**
 * Removes a sandbox's objects, whichever of them exist, in one transaction and without reading
 * the table first: a listing grows with every sandbox (~110 ms at 1,000, on every teardown).
 * nft 1.0.6 has no `destroy`, so each object is added, which leaves an existing one alone, and
 * then deleted; the map element goes before the chain it jumps to.
 */
export function sandboxRemovalScript(prefix: string, hostVeth: string): string {
  const t = tableRef(prefix)
  const veth = checkedHostVeth(prefix, hostVeth)
  const { chain, allowSet, denySet } = sandboxObjects(veth)
  return lines([
    `add chain ${t} ${chain}`,
    `add element ${t} ${SANDBOX_MAP} { "${veth}" : jump ${chain} }`,
    `delete element ${t} ${SANDBOX_MAP} { "${veth}" }`,
    `flush chain ${t} ${chain}`,
    `delete chain ${t} ${chain}`,
    `add set ${t} ${allowSet} ${INTERVAL_SET}`,
    `delete set ${t} ${allowSet}`,
    `add set ${t} ${denySet} ${INTERVAL_SET}`,
    `delete set ${t} ${denySet}`,
  ])
}

/** `add` then `delete`: removes the table whether or not it exists (nft 1.0.6 has no `destroy`). */
export function tableRemovalScript(prefix: string): string {
  const t = tableRef(prefix)
  return lines([`add table ${t}`, `delete table ${t}`])
}

function fillSets(prefix: string, veth: string, policy: ParsedEgressPolicy): string[] {
  const { allowSet, denySet } = sandboxObjects(veth)
  return [
    ...setContents(prefix, allowSet, policy.allow),
    ...setContents(prefix, denySet, policy.deny),
  ]
}

/** Replaces an interval set's elements; the CIDRs must not overlap (nft 1.0.6 refuses). */
function setContents(prefix: string, set: string, cidrs: readonly string[]): string[] {
  const t = tableRef(prefix)
  return [
    `flush set ${t} ${set}`,
    ...(cidrs.length === 0
      ? []
      : [`add element ${t} ${set} { ${cidrs.map(checkedCIDR).join(', ')} }`]),
  ]
}

function tableRef(prefix: string): string {
  return `inet ${nftTableName(checkedPrefix(prefix))}`
}

function lines(statements: readonly string[]): string {
  return statements.map((statement) => `${statement}\n`).join('')
}

function checkedPrefix(prefix: string): string {
  if (!PREFIX_PATTERN.test(prefix)) throw new RangeError(`invalid agent prefix ${prefix}`)
  return prefix
}

function checkedHostVeth(prefix: string, name: string): string {
  const pattern = `^${checkedPrefix(prefix)}h([0-9a-f]{8}|${BUILD_VETH_MARKER}[0-9a-f]{7})$`
  if (!new RegExp(pattern).test(name)) {
    throw new RangeError(`not a host veth of prefix ${prefix}: ${name}`)
  }
  return name
}

function checkedUplink(name: string): string {
  if (!UPLINK_NAME.test(name)) throw new RangeError(`unexpected interface name ${name}`)
  return name
}

function checkedCIDR(text: string): string {
  const cidr = parseIPv4CIDR(text)
  if (cidr === undefined || formatIPv4CIDR(cidr) !== text) {
    throw new RangeError(`not a normalised IPv4 CIDR: ${text}`)
  }
  return text
}
