import type { UnreachableNetwork } from './closed-networks.js'

/**
 * Where a sandbox may send traffic (wire contract §4.5): allow beats deny; entries are IPv4
 * CIDRs or bare IPs (`/32`). `allow_internet_access: false` arrives as denyOut 0.0.0.0/0.
 */
export interface EgressPolicy {
  allowOut: string[]
  denyOut: string[]
}

/** The network of one sandbox as the rest of the agent sees it. */
export interface SandboxNetwork {
  /** `ip netns` name. */
  netns: string
  /** Path for the OCI spec, `/run/netns/<name>`. */
  netnsPath: string
  hostVeth: string
  /** The sandbox's address (its `eth0`), where envd answers. */
  sandboxAddress: string
  /** The host end's address: the sandbox's gateway. */
  hostAddress: string
}

/** Owns the netns, veth pairs and the agent's nftables table. */
export interface NetworkManager {
  /** Creates the agent's nft table and base chains if missing. Idempotent. */
  init(): Promise<void>
  /**
   * Creates netns + veth + addresses + routes + the sandbox's set elements. With `netnsExists`
   * the netns is the caller's, already at the sandbox's `/run/netns/<name>`, made inside the
   * sandbox's user namespace (user-namespace.ts) or by CRIU's restore, and only wired here.
   */
  setup(
    sandboxID: string,
    slot: number,
    policy: EgressPolicy,
    options?: { netnsExists?: boolean },
  ): Promise<SandboxNetwork>
  /** Replaces the sandbox's allow/deny elements in place (live). */
  update(sandboxID: string, policy: EgressPolicy): Promise<void>
  /** What no sandbox may reach: the pool and the host's own addresses, as the host is now. */
  unreachable(): Promise<UnreachableNetwork[]>
  /** Removes everything `setup` made; missing pieces are fine. */
  teardown(sandboxID: string): Promise<void>
  /** Sandbox IDs whose netns exists on the host (for reconcile). */
  present(): Promise<string[]>
  /** Removes the agent's nft table (tests and uninstall). */
  destroy(): Promise<void>
}
