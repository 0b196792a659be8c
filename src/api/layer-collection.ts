import type { Agent } from '../agent/index.js'
import type { Logger } from '../logger.js'
import type { Store } from '../store/index.js'

/**
 * Releases the layers no template needs any more (issue 11, "Garbage"): after a template is
 * deleted, a tag moves or goes, or a build finishes, the agent removes every layer that no
 * ready, tagged or newest build names and no sandbox stacks. One collection runs at a time; a
 * request during one runs once more after it.
 */
export function layerCollector(store: Store, agent: Agent, logger: Logger): () => void {
  let running: Promise<void> | undefined
  let again = false
  const run = async (): Promise<void> => {
    do {
      again = false
      const removed = await agent.layers.collect(await store.layersInUse())
      if (removed.length > 0) logger.info({ layers: removed.length }, 'unused layers removed')
    } while (again)
  }
  return () => {
    if (running !== undefined) {
      again = true
      return
    }
    running = run()
      .catch((error: unknown) => logger.warn({ err: error }, 'layer collection failed'))
      .finally(() => {
        running = undefined
      })
  }
}
