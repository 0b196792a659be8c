import type { OutputEvent, OutputListener, ProcessOutput } from './process-output.js'

/** What waiting for the next event can yield besides an event. */
export type QueueWait = OutputEvent | 'idle' | 'aborted'

/** Queued output past which this subscriber pauses the process's output, and where it resumes. */
const HIGH_WATER_BYTES = 1024 * 1024
const LOW_WATER_BYTES = 256 * 1024

/**
 * One subscriber's view of a process's output: events queue up from the moment of
 * construction until read, so a stream that subscribes before the spawn loses nothing.
 */
export class OutputQueue {
  private readonly events: OutputEvent[] = []
  private queuedBytes = 0
  private wake: (() => void) | undefined
  private readonly listener: OutputListener
  private readonly unsubscribe: () => void

  constructor(private readonly output: ProcessOutput) {
    this.listener = (event) => {
      this.events.push(event)
      if (event.case === 'data') this.account(event.chunk.length)
      this.wake?.()
    }
    this.unsubscribe = output.subscribe(this.listener)
  }

  /**
   * The next event; `'idle'` when none came within `idleMs` (time for a keepalive), or
   * `'aborted'` once `signal` fires (the client went away or the deadline passed).
   */
  async next(idleMs: number, signal: AbortSignal): Promise<QueueWait> {
    if (this.events.length === 0) {
      if (signal.aborted) return 'aborted'
      const why = await this.wait(idleMs, signal)
      if (why !== 'event') return why
    }
    const event = this.events.shift()
    if (event === undefined) return 'idle'
    if (event.case === 'data') this.account(-event.chunk.length)
    return event
  }

  /** Stops receiving; output published afterwards is not kept. */
  close(): void {
    this.unsubscribe()
    this.events.length = 0
  }

  private wait(idleMs: number, signal: AbortSignal): Promise<'event' | 'idle' | 'aborted'> {
    return new Promise((resolve) => {
      const onAbort = (): void => settle('aborted')
      const timer = setTimeout(() => settle('idle'), idleMs)
      const settle = (why: 'event' | 'idle' | 'aborted'): void => {
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        this.wake = undefined
        resolve(why)
      }
      this.wake = () => settle('event')
      signal.addEventListener('abort', onAbort)
    })
  }

  private account(delta: number): void {
    this.queuedBytes += delta
    if (this.queuedBytes > HIGH_WATER_BYTES) this.output.congestion(this.listener, true)
    else if (this.queuedBytes < LOW_WATER_BYTES) this.output.congestion(this.listener, false)
  }
}
