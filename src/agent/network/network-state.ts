import * as z from 'zod/mini'
import { type PresentObjects, SANDBOX_MAP, sandboxObjects } from './nft-ruleset.js'

/** Readers of `ip -j` and `nft -j` output: what exists on the host right now. */

const NetnsList = z.array(z.object({ name: z.string() }))
const RouteList = z.array(z.object({ dev: z.optional(z.string()) }))

const TableList = z.object({
  nftables: z.array(z.object({ table: z.optional(z.object({ name: z.string() })) })),
})

const TableListing = z.object({
  nftables: z.array(
    z.object({
      chain: z.optional(z.object({ name: z.string() })),
      set: z.optional(z.object({ name: z.string() })),
      map: z.optional(
        z.object({
          name: z.string(),
          elem: z.optional(z.array(z.tuple([z.string(), z.unknown()]))),
        }),
      ),
    }),
  ),
})

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

/** Which of one sandbox's objects `nft -j list table` shows. */
export function presentObjects(stdout: string, hostVeth: string): PresentObjects {
  const items = TableListing.parse(JSON.parse(stdout)).nftables
  const { chain, allowSet, denySet } = sandboxObjects(hostVeth)
  const sets = new Set(items.flatMap((item) => item.set?.name ?? []))
  const map = items.find((item) => item.map?.name === SANDBOX_MAP)?.map
  return {
    mapElement: (map?.elem ?? []).some(([key]) => key === hostVeth),
    chain: items.some((item) => item.chain?.name === chain),
    allowSet: sets.has(allowSet),
    denySet: sets.has(denySet),
  }
}

function parseJSON<T>(schema: z.ZodMiniType<T>, stdout: string): T {
  return schema.parse(stdout.trim() === '' ? [] : JSON.parse(stdout))
}
