import { createHash } from 'node:crypto'

/**
 * Names of the host objects of one sandbox. Every name carries the agent's prefix, so that
 * reconcile finds what an earlier run left and a test finds what it leaked. Interface names
 * are limited to 15 bytes (IFNAMSIZ), so veths use a hash of the sandbox ID.
 */
export interface SandboxHostNames {
  /** OCI container ID. */
  container: string
  /** `ip netns` name (bind mount under /run/netns). */
  netns: string
  /** Host end of the veth pair. */
  hostVeth: string
  /** Sandbox end of the veth pair before it moves into the netns and becomes `eth0`. */
  peerVeth: string
  /** cgroup path relative to each hierarchy's root (the OCI `cgroupsPath`). */
  cgroupPath: string
}

/** A prefix is 2–5 lowercase letters or digits, starting with a letter. */
export const PREFIX_PATTERN = /^[a-z][a-z0-9]{1,4}$/

/**
 * Build sandboxes' IDs start with this (the builder's; E2B's own IDs start with `i`). Their host
 * veths are `<prefix>hx<hash>`: still `<prefix>h*` for every sandbox rule, and told apart where
 * builds may leave through the uplinks while other sandboxes may not (nft-ruleset.ts).
 */
export const BUILD_SANDBOX_ID_PREFIX = 'b'

/** The host veth marker of build sandboxes; never a hex digit, so no other veth has it. */
export const BUILD_VETH_MARKER = 'x'

export function hostNames(prefix: string, sandboxID: string): SandboxHostNames {
  const build = sandboxID.startsWith(BUILD_SANDBOX_ID_PREFIX)
  // IFNAMSIZ leaves 15 bytes: a build's marker takes one hash digit.
  const hash = createHash('sha256')
    .update(sandboxID)
    .digest('hex')
    .slice(0, build ? 7 : 8)
  const marker = build ? BUILD_VETH_MARKER : ''
  return {
    container: `${prefix}-${sandboxID}`,
    netns: `${prefix}-${sandboxID}`,
    hostVeth: `${prefix}h${marker}${hash}`,
    peerVeth: `${prefix}p${marker}${hash}`,
    cgroupPath: `${parentCgroupPath(prefix)}/${sandboxID}`,
  }
}

/** The cgroup all of an agent's sandboxes live under: it holds their pids budget and CPU weight. */
export function parentCgroupPath(prefix: string): string {
  return `/sandbar-${prefix}`
}

/** The nftables table (family `inet`) an agent with this prefix owns. */
export function nftTableName(prefix: string): string {
  return `sandbar_${prefix}`
}

/** The host name of every sandbox; the base template's /etc/hostname and /etc/hosts name it. */
export const SANDBOX_HOSTNAME = 'sandbox'
