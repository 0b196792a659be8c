import type { Logger } from '../logger.js'

/** Passes running on a timer; `stop` resolves once the pass in progress is done. */
export interface PeriodicPasses {
  stop(): Promise<void>
}

/**
 * Runs `pass` every `intervalMs`, never two at once: a tick that finds the previous pass still
 * running is skipped, so slow passes neither overlap nor pile up. A pass that throws is logged
 * as `<name> pass failed` and the next one runs. `pass` gets a signal that aborts at `stop`,
 * to end a long pass early.
 */
export function startPeriodicPasses(
  name: string,
  intervalMs: number,
  pass: (stopping: AbortSignal) => Promise<void>,
  logger: Logger,
): PeriodicPasses {
  const stopping = new AbortController()
  let current: Promise<void> | undefined
  const timer = setInterval(() => {
    if (current !== undefined) return
    current = pass(stopping.signal)
      .catch((error: unknown) => logger.error({ err: error }, `${name} pass failed`))
      .finally(() => {
        current = undefined
      })
  }, intervalMs)
  return {
    async stop() {
      stopping.abort()
      clearInterval(timer)
      await current
    },
  }
}
