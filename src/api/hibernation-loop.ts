import type { Agent } from '../agent/index.js'
import { SandboxStateError } from '../agent/index.js'
import type { Logger } from '../logger.js'
import type { Store } from '../store/index.js'
import { type PeriodicPasses, startPeriodicPasses } from './periodic-passes.js'

/** How often paused sandboxes are looked at; hibernation is not time-critical. */
const HIBERNATION_INTERVAL_MS = 1_000

/**
 * A paused sandbox's second tier (issue 14): frozen in memory first, its resume takes
 * milliseconds; paused for `afterMs`, its processes move to disk (Agent.hibernate) and its
 * memory goes back to the host, and a resume restores them in a fraction of a second.
 */
export function startHibernationLoop(
  store: Store,
  agent: Agent,
  afterMs: number,
  logger: Logger,
): PeriodicPasses {
  // A sandbox CRIU could not take (say, on runsc) stays frozen: tried once, logged once.
  const failed = new Set<string>()
  return startPeriodicPasses(
    'hibernation',
    Math.min(HIBERNATION_INTERVAL_MS, Math.max(afterMs, 100)),
    async (stopping) => {
      const frozen = (await agent.list()).filter(
        (sandbox) =>
          sandbox.state === 'paused' && !sandbox.hibernated && !failed.has(sandbox.sandboxID),
      )
      for (const { sandboxID } of frozen) {
        if (stopping.aborted) return
        // For a paused sandbox `endAt` is the time of the pause (sandbox-service.ts).
        const pausedAt = (await store.getSandbox(sandboxID))?.endAt.getTime()
        if (pausedAt === undefined || Date.now() - pausedAt < afterMs) continue
        await agent.hibernate(sandboxID).catch((error: unknown) => {
          // Resumed or killed meanwhile: nothing to hibernate.
          if (error instanceof SandboxStateError) return
          failed.add(sandboxID)
          logger.error({ err: error, sandboxID }, 'sandbox hibernation failed; it stays frozen')
        })
      }
    },
    logger,
  )
}
