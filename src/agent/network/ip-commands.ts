/**
 * argv and `ip -batch` scripts for iproute2. `ip -batch -` splits lines on whitespace and
 * honours quotes and `#`, so every token is checked against a conservative pattern before it
 * reaches a script; argv-only commands need no such check.
 */

/** What `ip` needs to wire one sandbox: names from host-names.ts, addresses from the pool. */
export interface VethSpec {
  netns: string
  /** The netns exists already (the sandbox's user namespace owns it); else the batch adds it. */
  netnsExists: boolean
  hostVeth: string
  hostAddress: string
  sandboxAddress: string
  prefixLength: number
}

const BATCH_TOKEN = /^[A-Za-z0-9_.:/-]+$/

/** The sandbox end's name inside its netns, what the runtime and envd expect. */
export const SANDBOX_INTERFACE = 'eth0'

/**
 * Host side, one `ip` process: the netns (unless it exists), then the veth pair with its peer created directly in
 * the netns as `eth0` (the kernel registers the peer's name in the target netns, so it never
 * clashes with the host's own `eth0`), then the host end's address and link state, and the
 * sandbox's MAC address as a permanent neighbour.
 *
 * Both ends know each other's MAC address from the start (vethMacAddress), so neither ever
 * ARPs. The kernel's ARP table is one for all network namespaces, and its learned entries are
 * capped (net.ipv4.neigh.default.gc_thresh3, 1,024 by default): with two per sandbox, the
 * 513th sandbox's envd could not be reached. Permanent entries are outside that cap.
 */
export function hostSetupBatch(spec: VethSpec): string {
  const hostMac = vethMacAddress(spec.hostAddress)
  const sandboxMac = vethMacAddress(spec.sandboxAddress)
  return batch([
    ...(spec.netnsExists ? [] : [['netns', 'add', spec.netns]]),
    [
      ...['link', 'add', spec.hostVeth, 'address', hostMac, 'type', 'veth'],
      ...['peer', 'name', SANDBOX_INTERFACE, 'address', sandboxMac, 'netns', spec.netns],
    ],
    ['addr', 'add', `${spec.hostAddress}/${spec.prefixLength}`, 'dev', spec.hostVeth],
    ['link', 'set', spec.hostVeth, 'up'],
    [
      'neigh',
      'replace',
      spec.sandboxAddress,
      'lladdr',
      sandboxMac,
      'dev',
      spec.hostVeth,
      ...PERMANENT,
    ],
  ])
}

/**
 * Sandbox side, run with `ip -n <netns> -batch -`: loopback, address, the host end's MAC
 * address as a permanent neighbour, default route.
 */
export function sandboxSetupBatch(spec: VethSpec): string {
  const hostMac = vethMacAddress(spec.hostAddress)
  return batch([
    ['link', 'set', 'lo', 'up'],
    ['addr', 'add', `${spec.sandboxAddress}/${spec.prefixLength}`, 'dev', SANDBOX_INTERFACE],
    ['link', 'set', SANDBOX_INTERFACE, 'up'],
    [
      'neigh',
      'replace',
      spec.hostAddress,
      'lladdr',
      hostMac,
      'dev',
      SANDBOX_INTERFACE,
      ...PERMANENT,
    ],
    ['route', 'add', 'default', 'via', spec.hostAddress],
  ])
}

const PERMANENT = ['nud', 'permanent']

/**
 * The MAC address of the veth end holding `address`: locally administered and unicast
 * (`02:00:`), then the address's four bytes, so no two ends of one pool share one.
 */
export function vethMacAddress(address: string): string {
  const bytes = address.split('.').map(Number)
  if (
    bytes.length !== 4 ||
    bytes.some((byte) => !Number.isInteger(byte) || byte < 0 || byte > 255)
  ) {
    throw new RangeError(`not an IPv4 address: ${address}`)
  }
  return ['02', '00', ...bytes.map((byte) => byte.toString(16).padStart(2, '0'))].join(':')
}

/** `ip [-n <netns>] -batch -`: the script arrives on stdin; the first failing line aborts. */
export function batchArgs(netns?: string): string[] {
  return netns === undefined ? ['-batch', '-'] : ['-n', netns, '-batch', '-']
}

/** Deleting one end removes the pair at once, even while a process still holds the netns. */
export function linkDeleteArgs(name: string): string[] {
  return ['link', 'delete', name]
}

/** JSON listings, read back with zod in network-state.ts. */
export function netnsListArgs(): string[] {
  return ['-j', 'netns', 'list']
}

export function defaultRouteArgs(): string[] {
  return ['-j', 'route', 'show', 'default']
}

function batch(lines: readonly (readonly string[])[]): string {
  return lines.map((tokens) => `${tokens.map(checkedToken).join(' ')}\n`).join('')
}

function checkedToken(token: string): string {
  if (!BATCH_TOKEN.test(token)) throw new RangeError(`unsafe token for ip -batch: ${token}`)
  return token
}
