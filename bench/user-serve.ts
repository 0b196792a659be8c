import { setTimeout as sleep } from 'node:timers/promises'
import { Sandbox, type SandboxOpts } from 'e2b'
import type { BenchAgentOptions } from './bench-agent.js'
import { type BenchClient, type BenchServe, startBenchServe } from './serve-launcher.js'

/** `base` sandboxes `sandbar serve` keeps ready by default (src/cli/serve.ts). */
export const DEFAULT_BASE_POOL = 2

/** A bench's `sandbar serve`, reached only through the SDK, knowing which creates were pooled. */
export interface UserServe {
  client: BenchClient
  /** `Sandbox.create` with the SDK's defaults and `options`; remembers the sandbox's ID. */
  create(options?: SandboxOpts): Promise<Sandbox>
  /** Whether a sandbox this bench created came out of the warm pool. */
  wasPooled(sandboxID: string): boolean
  /** Resolves once the warm pool holds `size` sandboxes that no create has taken yet. */
  poolFilled(size: number): Promise<void>
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
    async poolFilled(size) {
      const deadline = Date.now() + 120_000
      while (waiting() < size) {
        if (Date.now() > deadline) throw new Error(`the warm pool did not refill to ${size}`)
        await sleep(20)
      }
    },
    stop: () => serve.stop(),
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
