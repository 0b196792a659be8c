import { writeFile } from 'node:fs/promises'
import { networkInterfaces } from 'node:os'
import type { Logger } from '../../logger.js'
import { settleAll } from '../../settle-all.js'
import { runHostCommand } from '../host-command.js'
import { hostNames, nftTableName, PREFIX_PATTERN, type SandboxHostNames } from '../host-names.js'
import { pathExists } from '../path-exists.js'
import { unpinNamespace } from '../user-namespace.js'
import { type AddressPool, createAddressPool } from './address-pool.js'
import {
  openedNetworks,
  SPECIAL_PURPOSE_NETWORKS,
  type UnreachableNetwork,
} from './closed-networks.js'
import { normalisedNetworks, type ParsedEgressPolicy, parseEgressPolicy } from './egress-policy.js'
import {
  batchArgs,
  defaultRouteArgs,
  hostSetupBatch,
  linkDeleteArgs,
  netnsListArgs,
  sandboxSetupBatch,
} from './ip-commands.js'
import { covers, knownIPv4CIDR } from './ipv4.js'
import type { EgressPolicy, NetworkManager, SandboxNetwork } from './network.js'
import {
  defaultRouteDevices,
  netnsNames,
  type TableSandboxes,
  tableNames,
  tableSandboxes,
} from './network-state.js'
import {
  legacyRemovalScript,
  sandboxRemovalScript,
  sandboxScript,
  tableRemovalScript,
  tableScript,
  updateScript,
} from './nft-ruleset.js'
import { NftScriptQueue } from './nft-script-queue.js'

export interface NetworkManagerConfig {
  /** The agent's prefix (PREFIX_PATTERN); it is in every host object the manager makes. */
  prefix: string
  /** IPv4 pool carved into one /30 per slot, e.g. `10.231.0.0/16`. */
  addressPool: string
  /** NAT sandbox traffic out of the default-route interface; off, it may never leave there. */
  masquerade: boolean
  /** Build sandboxes are masqueraded even without `masquerade` (TableConfig). */
  masqueradeBuilds: boolean
  logger: Logger
  /** Paths of the tools; default `ip` and `nft` from PATH. */
  ipPath?: string
  nftPath?: string
}

/** What sandbox IDs may be: they become netns names and `ip -batch` tokens. */
const SANDBOX_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/

export function createNetworkManager(config: NetworkManagerConfig): NetworkManager {
  if (!PREFIX_PATTERN.test(config.prefix)) {
    throw new RangeError(`invalid agent prefix ${config.prefix}`)
  }
  return new HostNetworkManager(config, createAddressPool(config.addressPool))
}

/** netns and veths through `ip`, filtering through one nft table; see network.ts. */
class HostNetworkManager implements NetworkManager {
  private readonly prefix: string
  private readonly table: string
  private readonly logger: Logger
  /** Closed unless allowOut names them: special-purpose ranges, plus the host's subnets at init. */
  private closed: readonly string[] = normalisedNetworks(
    SPECIAL_PURPOSE_NETWORKS.map(knownIPv4CIDR),
  )

  /** unreachable()'s host addresses and when they were read (HOST_ADDRESSES_FRESH_MS). */
  private hostAddressesRead: { at: number; addresses: HostAddress[] } | undefined
  /**
   * By host veth, the allow and deny networks each sandbox's elements hold now: removing an
   * element takes its whole key. Read from the table at init, then kept with every script.
   */
  private applied = new Map<string, ParsedEgressPolicy>()
  /** Every script to the table goes through it: one `nft` at a time (nft-script-queue.ts). */
  private readonly nftScripts = new NftScriptQueue(async (script) => {
    await this.nft(['-f', '-'], script)
  })

  constructor(
    private readonly config: NetworkManagerConfig,
    private readonly pool: AddressPool,
  ) {
    this.prefix = config.prefix
    this.table = nftTableName(config.prefix)
    this.logger = config.logger
  }

  async init(): Promise<void> {
    const { masquerade, masqueradeBuilds } = this.config
    const uplinks = defaultRouteDevices(await this.ip(defaultRouteArgs()))
    this.closed = closedNetworks(this.prefix, hostAddresses())
    if (masquerade || masqueradeBuilds) {
      if (uplinks.length === 0) this.logger.warn('no default route: sandboxes have no way out')
      // Replies to masqueraded flows enter through the uplink, and the kernel forwards only
      // what arrives on an interface with forwarding on (host-facts § Networking).
      await Promise.all(uplinks.map(enableForwarding))
    }
    const poolCIDR = this.pool.cidr
    const { closed } = this
    const { policies, legacy } = await this.readTableSandboxes()
    const table = tableScript({
      prefix: this.prefix,
      poolCIDR,
      masquerade,
      masqueradeBuilds,
      uplinks,
      closed,
    })
    // An agent before the per-veth sets left its sandboxes' chains and sets: their policies
    // move to the sets in the same transaction, so no adopted sandbox loses its network.
    const moved = legacy.veths.flatMap((veth) => {
      const policy = policies.get(veth)
      return policy === undefined ? [] : [sandboxScript(this.prefix, veth, policy)]
    })
    await this.applyNft(table + legacyRemovalScript(this.prefix, legacy) + moved.join(''))
    this.applied = policies
    this.logger.info(
      { table: this.table, uplinks, masquerade, masqueradeBuilds, closed },
      'network table ready',
    )
  }

  async setup(
    sandboxID: string,
    slot: number,
    policy: EgressPolicy,
    { netnsExists = false }: { netnsExists?: boolean } = {},
  ): Promise<SandboxNetwork> {
    const names = this.namesOf(sandboxID)
    const parsed = this.setElements(policy)
    const addresses = this.pool.addresses(slot)
    const spec = { netns: names.netns, netnsExists, hostVeth: names.hostVeth, ...addresses }
    // The cleanup below would take a live sandbox's network down with the failed attempt.
    const existing = netnsExists ? `/sys/class/net/${names.hostVeth}` : netnsPath(names.netns)
    if (await pathExists(existing)) {
      throw new Error(`network of sandbox ${sandboxID} already exists`)
    }
    const started = performance.now()
    try {
      // Two `ip` processes instead of host-facts' seven: one batch per namespace.
      await this.ip(batchArgs(), hostSetupBatch(spec))
      await settleAll([
        enableForwarding(names.hostVeth),
        this.ip(batchArgs(names.netns), sandboxSetupBatch(spec)),
        this.applyNft(sandboxScript(this.prefix, names.hostVeth, parsed)).then(() => {
          this.applied.set(names.hostVeth, parsed)
        }),
      ])
    } catch (error) {
      await this.teardown(sandboxID).catch((cleanupError: unknown) =>
        this.logger.warn({ sandboxID, err: cleanupError }, 'cleanup after failed setup failed'),
      )
      throw error
    }
    this.logger.debug({ sandboxID, ms: performance.now() - started }, 'sandbox network ready')
    return {
      netns: names.netns,
      netnsPath: netnsPath(names.netns),
      hostVeth: names.hostVeth,
      sandboxAddress: addresses.sandboxAddress,
      hostAddress: addresses.hostAddress,
    }
  }

  async update(sandboxID: string, policy: EgressPolicy): Promise<void> {
    const parsed = this.setElements(policy)
    const { hostVeth } = this.namesOf(sandboxID)
    const applied = this.applied.get(hostVeth) ?? NO_ELEMENTS
    await this.applyNft(updateScript(this.prefix, hostVeth, applied, parsed))
    this.applied.set(hostVeth, parsed)
  }

  async teardown(sandboxID: string): Promise<void> {
    const { hostVeth, netns } = this.namesOf(sandboxID)
    const started = performance.now()
    // Deleting the host end removes the pair now (~30 ms of it is the kernel's), even while a
    // process still holds the netns; deleting only the netns would leave that to the kernel.
    // The link goes before the netns: deleting the netns also takes the pair with it, and the
    // two racing would make `ip link delete` miss its device.
    const removeInterfaces = async (): Promise<void> => {
      await this.removeIfPresent(`/sys/class/net/${hostVeth}`, linkDeleteArgs(hostVeth))
      // In this process: starting `ip netns delete` took 4–7 ms of every teardown.
      await unpinNamespace(netnsPath(netns))
    }
    await settleAll([this.removeRules(hostVeth), removeInterfaces()])
    this.logger.debug({ sandboxID, ms: performance.now() - started }, 'sandbox network removed')
  }

  /**
   * In-process (getifaddrs), no `ip` spawn: the api asks on every create and update. A burst of
   * creates shares one read, which lists every sandbox's host veth too (~1.5 ms at 120).
   */
  async unreachable(): Promise<UnreachableNetwork[]> {
    const pool = knownIPv4CIDR(this.pool.cidr)
    const now = performance.now()
    if (
      this.hostAddressesRead === undefined ||
      now - this.hostAddressesRead.at > HOST_ADDRESSES_FRESH_MS
    ) {
      this.hostAddressesRead = { at: now, addresses: hostAddresses() }
    }
    const addresses = this.hostAddressesRead.addresses
      .map(({ address }) => knownIPv4CIDR(`${address}/32`))
      // Loopback inside a sandbox is the sandbox's own; pool addresses are the pool's.
      .filter((cidr) => !covers(LOOPBACK, cidr) && !covers(pool, cidr))
    return [
      { cidr: this.pool.cidr, kind: 'address pool' },
      ...normalisedNetworks(addresses).map((cidr) => ({ cidr, kind: 'host address' as const })),
    ]
  }

  async present(): Promise<string[]> {
    const own = `${this.prefix}-`
    return netnsNames(await this.ip(netnsListArgs()))
      .filter((name) => name.startsWith(own))
      .map((name) => name.slice(own.length))
  }

  async destroy(): Promise<void> {
    await this.applyNft(tableRemovalScript(this.prefix))
    this.applied.clear()
  }

  /** The policy as the sandbox's sets hold it: allowOut opens closed networks only by name. */
  private setElements(policy: EgressPolicy): ParsedEgressPolicy {
    const parsed = parseEgressPolicy(policy)
    return { allow: openedNetworks(parsed.allow, this.closed), deny: parsed.deny }
  }

  private namesOf(sandboxID: string): SandboxHostNames {
    if (!SANDBOX_ID.test(sandboxID)) throw new RangeError(`invalid sandbox ID ${sandboxID}`)
    return hostNames(this.prefix, sandboxID)
  }

  private async removeRules(hostVeth: string): Promise<void> {
    const applied = this.applied.get(hostVeth) ?? NO_ELEMENTS
    try {
      await this.applyNft(sandboxRemovalScript(this.prefix, hostVeth, applied))
    } catch (error) {
      // The table goes with the service's network (destroy): then there is nothing to remove.
      if (await this.tableExists()) throw error
    }
    this.applied.delete(hostVeth)
  }

  /** The sandboxes the table holds; none when there is no table yet. */
  private async readTableSandboxes(): Promise<TableSandboxes> {
    if (!(await this.tableExists()))
      return { policies: new Map(), legacy: { veths: [], map: false } }
    return tableSandboxes(await this.nft(['-j', 'list', 'table', 'inet', this.table]))
  }

  private async tableExists(): Promise<boolean> {
    return tableNames(await this.nft(['-j', 'list', 'tables', 'inet'])).includes(this.table)
  }

  /** Removes what `path` shows exists; something that vanished meanwhile counts as removed. */
  private async removeIfPresent(path: string, args: string[]): Promise<void> {
    if (!(await pathExists(path))) return
    await this.ip(args).catch(async (error: unknown) => {
      if (await pathExists(path)) throw error
    })
  }

  private async applyNft(script: string): Promise<void> {
    await this.nftScripts.apply(script)
  }

  private ip(args: string[], input?: string): Promise<string> {
    return runHostCommand(this.config.ipPath ?? 'ip', args, input === undefined ? {} : { input })
  }

  private nft(args: string[], input?: string): Promise<string> {
    return runHostCommand(this.config.nftPath ?? 'nft', args, input === undefined ? {} : { input })
  }
}

const LOOPBACK = knownIPv4CIDR('127.0.0.0/8')

/** What a sandbox whose script never ran has in the sets. */
const NO_ELEMENTS: ParsedEgressPolicy = { allow: [], deny: [] }

/**
 * How long unreachable() trusts a read of the host's addresses. They change when the host's
 * administrator changes them; a create validated against a view this old is still right, as
 * the closed networks themselves are read once, at init.
 */
const HOST_ADDRESSES_FRESH_MS = 1_000

interface HostAddress {
  ifname: string
  address: string
  /** The address with its subnet's prefix length, `192.0.2.2/24`. */
  cidr: string
  /** Loopback. */
  internal: boolean
}

/** The IPv4 addresses of the host's interfaces (the agent runs in the host's netns). */
function hostAddresses(): HostAddress[] {
  return Object.entries(networkInterfaces()).flatMap(([ifname, entries = []]) =>
    entries.flatMap((entry) =>
      entry.family === 'IPv4' && entry.cidr !== null
        ? [{ ifname, address: entry.address, cidr: entry.cidr, internal: entry.internal }]
        : [],
    ),
  )
}

/**
 * The networks closed by default: the special-purpose ranges and the subnets of the host's own
 * interfaces (the machines next to the host, which may be public addresses in a data centre),
 * but not loopback's, nor the /30s of this agent's sandboxes (dropped before any of this).
 */
function closedNetworks(prefix: string, addresses: readonly HostAddress[]): string[] {
  const subnets = addresses
    .filter(({ ifname, internal }) => !internal && !ifname.startsWith(`${prefix}h`))
    .map(({ cidr }) => knownIPv4CIDR(cidr))
  return normalisedNetworks([...SPECIAL_PURPOSE_NETWORKS.map(knownIPv4CIDR), ...subnets])
}

/**
 * Per interface, not global `ip_forward` (host-facts § Networking): the kernel forwards a
 * packet only when the interface it arrived on has forwarding on.
 */
function enableForwarding(name: string): Promise<void> {
  return writeFile(`/proc/sys/net/ipv4/conf/${name}/forwarding`, '1')
}

/** Where `ip netns add` bind-mounts a netns; the OCI spec's network namespace path. */
export function netnsPath(netns: string): string {
  return `/run/netns/${netns}`
}
