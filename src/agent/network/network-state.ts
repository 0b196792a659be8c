import * as z from 'zod/mini'

/** Readers of `ip -j` and `nft -j` output: what exists on the host right now. */

const NetnsList = z.array(z.object({ name: z.string() }))
const RouteList = z.array(z.object({ dev: z.optional(z.string()) }))

const TableList = z.object({
  nftables: z.array(z.object({ table: z.optional(z.object({ name: z.string() })) })),
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

function parseJSON<T>(schema: z.ZodMiniType<T>, stdout: string): T {
  return schema.parse(stdout.trim() === '' ? [] : JSON.parse(stdout))
}
