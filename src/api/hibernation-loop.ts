import { readFile } from 'node:fs/promises'
import type { Agent } from '../agent/index.js'
import { HOST_MEMORY_RESERVE_MB, SandboxStateError } from '../agent/index.js'
import type { Logger } from '../logger.js'
import type { Store } from '../store/index.js'
import { type PeriodicPasses, startPeriodicPasses } from './periodic-passes.js'

/** How often paused sandboxes are looked at; hibernation is not time-critical. */
const HIBERNATION_INTERVAL_MS = 1_000

/**
 * Whether the host is short of memory: less available (MemAvailable) than the reserve it
 * keeps for itself, `HOST_MEMORY_RESERVE_MB` or a tenth of its memory, whichever is more.
 */
export async function hostMemoryShort(): Promise<boolean> {
  const meminfo = await readFile('/proc/meminfo', 'utf8')
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(meminfo)?.[1])
  const reserveKiB = Math.max(HOST_MEMORY_RESERVE_MB * 1024, kib('MemTotal') / 10)
  return kib('MemAvailable') < reserveKiB
}

/**
 * A paused sandbox's second tier (issue 14): frozen in memory first, its resume takes
 * milliseconds; paused for `afterMs`, or sooner while the host is short of memory (oldest
 * pause first, until it is not), its processes move to disk (Agent.hibernate) and its memory
 * goes back to the host, and a resume restores them in a fraction of a second.
 */
export function startHibernationLoop(
  store: Store,
  agent: Agent,
  afterMs: number,
  logger: Logger,
  memoryShort: () => Promise<boolean> = hostMemoryShort,
): PeriodicPasses {
  // A sandbox CRIU could not take (say, on runsc) stays frozen: tried once, logged once.
  const failed = new Set<string>()
  const hibernate = async (sandboxID: string, reason: 'paused' | 'memory') => {
    await agent.hibernate(sandboxID).catch((error: unknown) => {
      // Resumed or killed meanwhile: nothing to hibernate.
      if (error instanceof SandboxStateError) return
      failed.add(sandboxID)
      logger.error({ err: error, sandboxID, reason }, 'sandbox hibernation failed; it stays frozen')
    })
  }
  return startPeriodicPasses(
    'hibernation',
    Math.min(HIBERNATION_INTERVAL_MS, Math.max(afterMs, 100)),
    async (stopping) => {
      const frozen = (await agent.list()).filter(
        (sandbox) =>
          sandbox.state === 'paused' &&
          !sandbox.hibernated &&
          !sandbox.filesOnly &&
          !failed.has(sandbox.sandboxID),
      )
      if (frozen.length === 0) return
      // For a paused sandbox `endAt` is the time of the pause (sandbox-service.ts).
      const paused = await Promise.all(
        frozen.map(async ({ sandboxID }) => ({
          sandboxID,
          pausedAt: (await store.getSandbox(sandboxID))?.endAt.getTime() ?? Date.now(),
        })),
      )
      paused.sort((a, b) => a.pausedAt - b.pausedAt)
      for (const { sandboxID, pausedAt } of paused) {
        if (stopping.aborted) return
        if (Date.now() - pausedAt >= afterMs) await hibernate(sandboxID, 'paused')
        else if (await memoryShort()) {
          logger.info({ sandboxID }, 'host memory short: hibernating a paused sandbox early')
          await hibernate(sandboxID, 'memory')
        }
      }
    },
    logger,
  )
}
