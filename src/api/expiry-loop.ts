import type { Logger } from '../logger.js'
import type { Store } from '../store/index.js'
import { type PeriodicPasses, startPeriodicPasses } from './periodic-passes.js'
import type { SandboxService } from './sandbox-service.js'

/** How often expired sandboxes are looked for (infra's evictor polls every 50 ms, §4.2). */
const EXPIRY_INTERVAL_MS = 250

/** Kills or pauses each running sandbox whose timeout has passed (wire contract §4.2). */
export function startExpiryLoop(
  store: Store,
  service: SandboxService,
  logger: Logger,
): PeriodicPasses {
  return startPeriodicPasses(
    'expiry',
    EXPIRY_INTERVAL_MS,
    async (stopping) => {
      for (const sandbox of await store.expiredSandboxes(new Date())) {
        if (stopping.aborted) return
        await service.expire(sandbox).catch((error: unknown) => {
          logger.error({ err: error, sandboxID: sandbox.sandboxID }, 'sandbox expiry failed')
        })
      }
    },
    logger,
  )
}
