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

/**
 * Host veths of the sandboxes whose elements are all in: any other sandbox veth (mid-setup, or
 * left behind) gets nothing.
 */
export const READY_SET = 'ready'

/** Per sandbox, keyed `<host veth> . <network>`: where it may go, and where not. */
export const ALLOW_SET = 'allow'
export const DENY_SET = 'deny'

/** The table's set of networks closed by default, shared by every sandbox. */
export const CLOSED_SET = 'closed'

const INTERVAL_SET = '{ type ipv4_addr; flags interval; }'

const SANDBOX_INTERVAL_SET = '{ type ifname . ipv4_addr; flags interval; }'

const UPLINK_NAME = /^[A-Za-z0-9_.-]{1,15}$/

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
    `add set ${t} ${CLOSED_SET} ${INTERVAL_SET}`,
    `add set ${t} ${READY_SET} { type ifname; }`,
    `add set ${t} ${ALLOW_SET} ${SANDBOX_INTERVAL_SET}`,
    `add set ${t} ${DENY_SET} ${SANDBOX_INTERVAL_SET}`,
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
    `add rule ${t} forward iifname ${sandboxes} iifname != @${READY_SET} drop`,
    // Its own allow first (wire contract §4.5: allow beats deny; its elements come from
    // closed-networks.ts `openedNetworks`), then the networks closed by default, then its deny.
    // Sets keyed by veth, not a chain per sandbox behind a verdict map: each jump element
    // makes the kernel check every sandbox chain at commit, and each interval set is one
    // more dump for nft before it commits (35 ms a create at 400 sandboxes, against 4).
    `add rule ${t} forward iifname ${sandboxes} iifname . ip daddr @${ALLOW_SET} accept`,
    `add rule ${t} forward iifname ${sandboxes} ip daddr @${CLOSED_SET} drop`,
    `add rule ${t} forward iifname ${sandboxes} iifname . ip daddr @${DENY_SET} drop`,
    `add rule ${t} forward iifname ${sandboxes} accept`,
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
 * A sandbox's elements: its allow and deny networks, then its veth in the ready set. The base
 * forward chain has already dropped traffic to other sandboxes and the host, so nothing here can
 * open them.
 */
export function sandboxScript(
  prefix: string,
  hostVeth: string,
  policy: ParsedEgressPolicy,
): string {
  return lines(addElements(prefix, checkedHostVeth(prefix, hostVeth), policy))
}

/**
 * Replaces a sandbox's allow and deny elements in one transaction: no moment where neither list
 * applies. `applied` is what its last script put in.
 */
export function updateScript(
  prefix: string,
  hostVeth: string,
  applied: ParsedEgressPolicy,
  policy: ParsedEgressPolicy,
): string {
  const veth = checkedHostVeth(prefix, hostVeth)
  return lines([
    ...removeElements(prefix, veth, applied),
    ...policyElements(prefix, veth, policy, 'add'),
  ])
}

/**
 * Removes a sandbox's elements, `applied` being what its last script put in, whether or not
 * they are still there, and without reading the sets first: a listing grows with every sandbox.
 * nft 1.0.6 has no `destroy`, so each element is added, which leaves an identical one alone,
 * and then deleted; its veth leaves the ready set first.
 */
export function sandboxRemovalScript(
  prefix: string,
  hostVeth: string,
  applied: ParsedEgressPolicy,
): string {
  const t = tableRef(prefix)
  const veth = checkedHostVeth(prefix, hostVeth)
  return lines([
    `add element ${t} ${READY_SET} { "${veth}" }`,
    `delete element ${t} ${READY_SET} { "${veth}" }`,
    ...removeElements(prefix, veth, applied),
  ])
}

/**
 * Removes what agents before the per-veth sets made for each sandbox: a verdict map of jumps to
 * a chain per sandbox, whose rules used its own allow and deny sets. For after tableScript,
 * whose forward chain no longer jumps through the map. Each object is added before it is
 * deleted, as a half-removed sandbox may lack some.
 */
export function legacyRemovalScript(
  prefix: string,
  legacy: { veths: readonly string[]; map: boolean },
): string {
  const t = tableRef(prefix)
  return lines([
    ...(legacy.map ? [`delete map ${t} ${LEGACY_SANDBOX_MAP}`] : []),
    ...legacy.veths.flatMap((veth) => {
      const checked = checkedHostVeth(prefix, veth)
      return [
        `add chain ${t} sandbox_${checked}`,
        `flush chain ${t} sandbox_${checked}`,
        `delete chain ${t} sandbox_${checked}`,
        ...[`allow_${checked}`, `deny_${checked}`].flatMap((set) => [
          `add set ${t} ${set} ${INTERVAL_SET}`,
          `delete set ${t} ${set}`,
        ]),
      ]
    }),
  ])
}

/** The verdict map of agents before the per-veth sets: host veth → `jump sandbox_<veth>`. */
export const LEGACY_SANDBOX_MAP = 'sandboxes'

/** `add` then `delete`: removes the table whether or not it exists (nft 1.0.6 has no `destroy`). */
export function tableRemovalScript(prefix: string): string {
  const t = tableRef(prefix)
  return lines([`add table ${t}`, `delete table ${t}`])
}

function addElements(prefix: string, veth: string, policy: ParsedEgressPolicy): string[] {
  const t = tableRef(prefix)
  return [
    ...policyElements(prefix, veth, policy, 'add'),
    `add element ${t} ${READY_SET} { "${veth}" }`,
  ]
}

/** Removes `applied`'s elements whether or not they are there: each is added, then deleted. */
function removeElements(prefix: string, veth: string, applied: ParsedEgressPolicy): string[] {
  return [
    ...policyElements(prefix, veth, applied, 'add'),
    ...policyElements(prefix, veth, applied, 'delete'),
  ]
}

/** `add` or `delete` of a sandbox's allow and deny elements (none for an empty list). */
function policyElements(
  prefix: string,
  veth: string,
  policy: ParsedEgressPolicy,
  verb: 'add' | 'delete',
): string[] {
  const t = tableRef(prefix)
  const statement = (set: string, cidrs: readonly string[]): string[] => {
    if (cidrs.length === 0) return []
    const elements = cidrs.map((cidr) => `"${veth}" . ${checkedCIDR(cidr)}`)
    return [`${verb} element ${t} ${set} { ${elements.join(', ')} }`]
  }
  return [...statement(ALLOW_SET, policy.allow), ...statement(DENY_SET, policy.deny)]
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
