import { readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { Sandbox, type SandboxOpts } from 'e2b'
import { hostNames, parentCgroupPath } from '../src/agent/host-names.js'
import { readCgroupMode } from '../src/agent/runtime/cgroup-mode.js'
import type { BenchAgentOptions } from './bench-agent.js'
import { type BenchClient, type BenchServe, startBenchServe } from './serve-launcher.js'

/** `base` sandboxes `sandbar serve` keeps ready by default (src/cli/serve.ts). */
export const DEFAULT_BASE_POOL = 2

/**
 * A sandbox's lifetime for those that live through a whole phase (1,000 idle ones take minutes
 * to create): the SDK's default of 5 minutes would end them midway. The service's own cap is
 * an hour.
 */
export const LONG_LIVED_MS = 60 * 60 * 1000

/** A bench's `sandbar serve`, reached only through the SDK, knowing which creates were pooled. */
export interface UserServe {
  client: BenchClient
  /** `Sandbox.create` with the SDK's defaults and `options`; remembers the sandbox's ID. */
  create(options?: SandboxOpts): Promise<Sandbox>
  /** Whether a sandbox this bench created came out of the warm pool. */
  wasPooled(sandboxID: string): boolean
  /**
   * What the kernel charges the cgroups of all the service's sandboxes, pooled ones included,
   * in MiB: beside the host's MemAvailable, a figure other work on the host does not move.
   */
  sandboxesMemoryMiB(): Promise<number>
  /** What the kernel charges one sandbox's cgroup, in MiB. */
  sandboxMemoryMiB(sandboxID: string): Promise<number>
  /** Resolves once the warm pool holds `size` sandboxes that no create has taken yet. */
  poolFilled(size: number): Promise<void>
  /** Resolves once the service logs the sandbox's hibernation, with what it logged. */
  hibernated(sandboxID: string): Promise<{ durationMs: number; imageBytes: number }>
  /** Resolves once the service logs a snapshot of the sandbox, with how long it stood frozen. */
  snapshotted(sandboxID: string): Promise<{ frozenMs: number; imageBytes: number }>
  stop(): Promise<void>
}

export async function startUserServe(
  options: Omit<BenchAgentOptions, 'dataDir'>,
  maxSandboxes: number,
  extraArgs: string[] = [],
): Promise<UserServe> {
  const serve: BenchServe = await startBenchServe(options, maxSandboxes, { extraArgs })
  const created = new Set<string>()
  const waiting = () => [...serve.pooled].filter((sandboxID) => !created.has(sandboxID)).length
  return {
    client: serve.client,
    async create(createOptions) {
      const sandbox = await Sandbox.create({ ...serve.client, ...createOptions })
      created.add(sandbox.sandboxId)
      return sandbox
    },
    wasPooled: (sandboxID) => serve.pooled.has(sandboxID),
    sandboxesMemoryMiB: () => cgroupMemoryMiB(parentCgroupPath(serve.prefix)),
    sandboxMemoryMiB: (sandboxID) => cgroupMemoryMiB(hostNames(serve.prefix, sandboxID).cgroupPath),
    async poolFilled(size) {
      const deadline = Date.now() + 120_000
      while (waiting() < size) {
        if (Date.now() > deadline) throw new Error(`the warm pool did not refill to ${size}`)
        await sleep(20)
      }
    },
    hibernated: (sandboxID) => logged(serve.hibernations, sandboxID, 'hibernate'),
    snapshotted: (sandboxID) => logged(serve.snapshots, sandboxID, 'snapshot'),
    stop: () => serve.stop(),
  }
}

/** What the kernel charges a cgroup, in MiB; 0 for one not made yet. */
async function cgroupMemoryMiB(cgroupPath: string): Promise<number> {
  const file =
    (await readCgroupMode()).kind === 'v2'
      ? `/sys/fs/cgroup${cgroupPath}/memory.current`
      : `/sys/fs/cgroup/memory${cgroupPath}/memory.usage_in_bytes`
  // The agent makes a sandbox's cgroup as it starts it, and the parent's with the first one.
  const charged = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '0'
    throw error
  })
  return Number(charged) / 1024 / 1024
}

/** What the service logged of a sandbox, once it has (within a minute). */
async function logged<T>(entries: ReadonlyMap<string, T>, sandboxID: string, what: string) {
  const deadline = Date.now() + 60_000
  for (;;) {
    const entry = entries.get(sandboxID)
    if (entry !== undefined) return entry
    if (Date.now() > deadline) throw new Error(`the service logged no ${what} of ${sandboxID}`)
    await sleep(20)
  }
}

/** Kills sandboxes a few at a time, as a user's clean-up loop would. */
export async function killAll(sandboxes: Sandbox[], concurrency = 8): Promise<void> {
  const queue = [...sandboxes]
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let sandbox = queue.pop(); sandbox !== undefined; sandbox = queue.pop()) {
        await sandbox.kill()
      }
    }),
  )
}
