import type { Server } from 'node:http'
import type * as Inspector from 'node:inspector'
import { createRequire } from 'node:module'
import type { Logger } from '../logger.js'

/** Quiet this long after a request, envd gives its garbage back. */
export const IDLE_MS = 2_000
/** And at most this often, should a client call every few seconds. */
export const MIN_GAP_MS = 30_000
/**
 * Only after a busy spell: a sandbox that answered a handful of calls holds little garbage
 * (1,000 sandboxes idle after one command each held 13.5 MiB with a collection, 14.1
 * without), while the collection costs ~33 ms of CPU. Collected after every quiet spell, the
 * bench's 1,000 sandboxes, each asked one command in turn, saw their slowest answer at
 * 931 ms (92 ms in the run before): the collections piled up behind the later ones.
 */
export const MIN_REQUESTS = 50

/**
 * Runs `collect` once envd has had no request for IDLE_MS after MIN_REQUESTS or more since
 * the last collection, at most every MIN_GAP_MS.
 * V8 collects when allocation fills its heap, and an idle envd allocates nothing: the
 * garbage of its start and of each busy spell stays in its pages until the next request.
 * Returns the function that stops it.
 */
export function collectWhenIdle(server: Server, collect: () => Promise<void>): () => void {
  let lastCollected = Number.NEGATIVE_INFINITY
  let requests = 0
  // Armed by the first request, not at start: a sandbox's first is the agent's, right away.
  let timer: NodeJS.Timeout | undefined
  const fire = (): void => {
    // The next request re-arms the timer.
    if (requests < MIN_REQUESTS) return
    const wait = lastCollected + MIN_GAP_MS - Date.now()
    if (wait > 0) {
      timer = setTimeout(fire, Math.max(wait, IDLE_MS)).unref()
      return
    }
    lastCollected = Date.now()
    requests = 0
    void collect()
  }
  const onRequest = (): void => {
    requests++
    // refresh() restarts a pending timer and re-arms one that has fired.
    if (timer === undefined) timer = setTimeout(fire, IDLE_MS).unref()
    else timer.refresh()
  }
  server.on('request', onRequest)
  return () => {
    server.off('request', onRequest)
    clearTimeout(timer)
  }
}

/**
 * A full collection that also returns the freed pages to the kernel: V8's low-memory
 * notification, which node reaches only through the inspector protocol's
 * `HeapProfiler.collectGarbage`, here in process (no port opens). A plain `gc()` collected as
 * much but kept the pages. In a sandbox, an idle envd after its first command went from
 * 16.0 to 12.0 MiB of anonymous memory, after ~650 calls from 26.4 to 18.7 MiB.
 */
export async function collectAllGarbage(logger: Logger): Promise<void> {
  try {
    // Loaded at the first collection: ~1.5 ms that envd's start does without. A require, since
    // envd's bundle runs in a vm.Script, which has no dynamic import of its own.
    const { Session } = createRequire(import.meta.url)('node:inspector') as typeof Inspector
    const session = new Session()
    session.connect()
    try {
      await new Promise<void>((resolve, reject) => {
        session.post('HeapProfiler.collectGarbage', (error) => (error ? reject(error) : resolve()))
      })
    } finally {
      session.disconnect()
    }
  } catch (error) {
    // A node built without the inspector keeps its garbage; envd works the same.
    logger.debug({ err: error }, 'idle garbage collection unavailable')
  }
}
