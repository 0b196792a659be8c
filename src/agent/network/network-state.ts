import * as z from 'zod/mini'
import type { ParsedEgressPolicy } from './egress-policy.js'
import { ALLOW_SET, DENY_SET, LEGACY_SANDBOX_MAP, READY_SET } from './nft-ruleset.js'

/** Readers of `ip -j` and `nft -j` output: what exists on the host right now. */

const NetnsList = z.array(z.object({ name: z.string() }))
const RouteList = z.array(z.object({ dev: z.optional(z.string()) }))

const TableList = z.object({
  nftables: z.array(z.object({ table: z.optional(z.object({ name: z.string() })) })),
})

/** A network as nft prints a set element: `1.2.3.4` for a /32, else a prefix. */
const Network = z.union([
  z.string(),
  z.object({ prefix: z.object({ addr: z.string(), len: z.number() }) }),
])

const Elements = z.optional(z.array(z.unknown()))

const TableListing = z.object({
  nftables: z.array(
    z.object({
      set: z.optional(z.object({ name: z.string(), elem: Elements })),
      map: z.optional(z.object({ name: z.string(), elem: Elements })),
    }),
  ),
})

const SandboxElement = z.object({ concat: z.tuple([z.string(), Network]) })
const LegacyMapElement = z.tuple([z.string(), z.unknown()])

/** The sandboxes an agent's table holds, as `nft -j list table` shows them. */
export interface TableSandboxes {
  /** By host veth: the networks in its allow and deny elements, for each sandbox with any. */
  policies: Map<string, ParsedEgressPolicy>
  /**
   * Host veths with objects of an agent before the per-veth sets (nft-ruleset.ts
   * legacyRemovalScript), and whether its map is there. Their policies are in `policies`.
   */
  legacy: { veths: string[]; map: boolean }
}

/** Reads the sandboxes of an agent's table, of this agent's layout or the legacy one. */
export function tableSandboxes(stdout: string): TableSandboxes {
  const items = TableListing.parse(JSON.parse(stdout)).nftables
  const sets = new Map(items.flatMap(({ set }) => (set ? [[set.name, set.elem ?? []]] : [])))
  const policies = new Map<string, ParsedEgressPolicy>()
  const policyOf = (veth: string): ParsedEgressPolicy => {
    const found = policies.get(veth) ?? { allow: [], deny: [] }
    policies.set(veth, found)
    return found
  }
  for (const veth of sets.get(READY_SET) ?? []) policyOf(z.string().parse(veth))
  for (const [name, list] of [
    [ALLOW_SET, 'allow'],
    [DENY_SET, 'deny'],
  ] as const) {
    for (const element of sets.get(name) ?? []) {
      const [veth, network] = SandboxElement.parse(element).concat
      policyOf(veth)[list].push(cidrOf(network))
    }
  }
  const legacyMap = items.find(({ map }) => map?.name === LEGACY_SANDBOX_MAP)?.map
  const legacyReady = (legacyMap?.elem ?? []).map((element) => LegacyMapElement.parse(element)[0])
  for (const veth of legacyReady) {
    policyOf(veth).allow.push(...(sets.get(`allow_${veth}`) ?? []).map(legacyCIDR))
    policyOf(veth).deny.push(...(sets.get(`deny_${veth}`) ?? []).map(legacyCIDR))
  }
  const legacyVeths = [...sets.keys()].flatMap((name) => /^allow_(.+)$/.exec(name)?.[1] ?? [])
  return {
    policies,
    legacy: { veths: [...new Set([...legacyReady, ...legacyVeths])], map: legacyMap !== undefined },
  }
}

function cidrOf(network: z.infer<typeof Network>): string {
  return typeof network === 'string'
    ? `${network}/32`
    : `${network.prefix.addr}/${network.prefix.len}`
}

function legacyCIDR(element: unknown): string {
  return cidrOf(Network.parse(element))
}

/** `ip -j netns list` prints nothing at all when there is no netns. */
export function netnsNames(stdout: string): string[] {
  return parseJSON(NetnsList, stdout).map((netns) => netns.name)
}

export function tableNames(stdout: string): string[] {
  const items = TableList.parse(JSON.parse(stdout)).nftables
  return items.flatMap((item) => item.table?.name ?? [])
}

/** Devices of the default routes, each once (a host may have several, by metric). */
export function defaultRouteDevices(stdout: string): string[] {
  const devices = parseJSON(RouteList, stdout).flatMap((route) => route.dev ?? [])
  return [...new Set(devices)]
}

function parseJSON<T>(schema: z.ZodMiniType<T>, stdout: string): T {
  return schema.parse(stdout.trim() === '' ? [] : JSON.parse(stdout))
}
