import type { Logger } from '../logger.js'
import type { Store } from '../store/index.js'
import type { SandboxService } from './sandbox-service.js'

/** How often expired sandboxes are looked for (infra's evictor polls every 50 ms, §4.2). */
const EXPIRY_INTERVAL_MS = 250

/** A running expiry loop; `stop` resolves once the current pass is done. */
export interface ExpiryLoop {
  stop(): Promise<void>
}

/** Kills or pauses each running sandbox whose timeout has passed (wire contract §4.2). */
export function startExpiryLoop(store: Store, service: SandboxService, logger: Logger): ExpiryLoop {
  let stopped = false
  let pass: Promise<void> = Promise.resolve()
  const runPass = async () => {
    for (const sandbox of await store.expiredSandboxes(new Date())) {
      if (stopped) return
      await service.expire(sandbox).catch((error: unknown) => {
        logger.error({ err: error, sandboxID: sandbox.sandboxID }, 'sandbox expiry failed')
      })
    }
  }
  const timer = setInterval(() => {
    pass = pass.then(runPass).catch((error: unknown) => {
      logger.error({ err: error }, 'expiry pass failed')
    })
  }, EXPIRY_INTERVAL_MS)
  return {
    async stop() {
      stopped = true
      clearInterval(timer)
      await pass
    },
  }
}
