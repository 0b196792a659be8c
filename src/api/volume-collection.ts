import type { Agent } from '../agent/index.js'
import type { Logger } from '../logger.js'
import type { Store } from '../store/index.js'
import { startPeriodicPasses } from './periodic-passes.js'

/** How often deleted volumes that a sandbox still held are tried again. */
const RETRY_INTERVAL_MS = 30_000

/** Removes deleted volumes' data; `request` runs a pass soon, `stop` ends the timer. */
export interface VolumeCollection {
  request(): void
  stop(): Promise<void>
}

/**
 * Removes the data of deleted volumes (issue 15, "Delete: refuses or defers while mounted"):
 * Sandbar defers. A delete frees the name at once; the data of a deleted volume goes only once
 * no sandbox mounts it any more, running or paused. The agent holds that check against the
 * kernel (`Volumes.remove` answers false while a sandbox's mount namespace still holds the
 * volume's filesystem), so it covers every sandbox whatever the store says; until then the row
 * stays, marked deleted, and a pass every 30 s tries again. A pass runs at start, after every
 * delete, and on that timer. A check against sandboxes kept without processes (a hibernated
 * one's saved mounts) belongs in `pass` beside the agent's, before the data goes.
 */
export function startVolumeCollection(
  store: Store,
  agent: Agent,
  logger: Logger,
): VolumeCollection {
  let running: Promise<void> | undefined
  let again = false
  const pass = async (): Promise<void> => {
    for (const volume of await store.deletedVolumes()) {
      const log = logger.child({ volumeID: volume.volumeID })
      try {
        if (await agent.volumes.remove(volume.volumeID)) {
          await store.forgetVolume(volume.volumeID)
          log.info('deleted volume data removed')
        } else {
          log.debug('deleted volume still mounted by a sandbox; its data stays for now')
        }
      } catch (error) {
        log.warn({ err: error }, 'deleted volume data could not be removed yet')
      }
    }
  }
  const request = (): void => {
    if (running !== undefined) {
      again = true
      return
    }
    running = (async () => {
      do {
        again = false
        await pass()
      } while (again)
    })()
      .catch((error: unknown) => logger.warn({ err: error }, 'volume collection failed'))
      .finally(() => {
        running = undefined
      })
  }
  const timer = startPeriodicPasses(
    'volume collection',
    RETRY_INTERVAL_MS,
    async () => request(),
    logger,
  )
  request()
  return {
    request,
    async stop() {
      await timer.stop()
      await running
    },
  }
}
