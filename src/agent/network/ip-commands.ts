/**
 * argv and `ip -batch` scripts for iproute2. `ip -batch -` splits lines on whitespace and
 * honours quotes and `#`, so every token is checked against a conservative pattern before it
 * reaches a script; argv-only commands need no such check.
 */

/** What `ip` needs to wire one sandbox: names from host-names.ts, addresses from the pool. */
export interface VethSpec {
  netns: string
  hostVeth: string
  hostAddress: string
  sandboxAddress: string
  prefixLength: number
}

const BATCH_TOKEN = /^[A-Za-z0-9_.:/-]+$/

/** The sandbox end's name inside its netns, what the runtime and envd expect. */
export const SANDBOX_INTERFACE = 'eth0'

/**
 * Host side, one `ip` process: the netns, then the veth pair with its peer created directly in
 * the netns as `eth0` (the kernel registers the peer's name in the target netns, so it never
 * clashes with the host's own `eth0`), then the host end's address and link state.
 */
export function hostSetupBatch(spec: VethSpec): string {
  return batch([
    ['netns', 'add', spec.netns],
    [
      'link',
      'add',
      spec.hostVeth,
      'type',
      'veth',
      'peer',
      'name',
      SANDBOX_INTERFACE,
      'netns',
      spec.netns,
    ],
    ['addr', 'add', `${spec.hostAddress}/${spec.prefixLength}`, 'dev', spec.hostVeth],
    ['link', 'set', spec.hostVeth, 'up'],
  ])
}

/** Sandbox side, run with `ip -n <netns> -batch -`: loopback, address, default route. */
export function sandboxSetupBatch(spec: VethSpec): string {
  return batch([
    ['link', 'set', 'lo', 'up'],
    ['addr', 'add', `${spec.sandboxAddress}/${spec.prefixLength}`, 'dev', SANDBOX_INTERFACE],
    ['link', 'set', SANDBOX_INTERFACE, 'up'],
    ['route', 'add', 'default', 'via', spec.hostAddress],
  ])
}

/** `ip [-n <netns>] -batch -`: the script arrives on stdin; the first failing line aborts. */
export function batchArgs(netns?: string): string[] {
  return netns === undefined ? ['-batch', '-'] : ['-n', netns, '-batch', '-']
}

export function netnsDeleteArgs(netns: string): string[] {
  return ['netns', 'delete', netns]
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
