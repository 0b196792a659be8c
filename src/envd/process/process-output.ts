import type { ExitStatus } from './exit-status.js'

/** Which stream a chunk of output came from (the `DataEvent.output` case, wire contract §3.5). */
export type OutputKind = 'stdout' | 'stderr' | 'pty'

/** What a subscriber to a process receives: output chunks, then the end exactly once. */
export type OutputEvent =
  | { case: 'data'; kind: OutputKind; chunk: Uint8Array }
  | { case: 'end'; status: ExitStatus }

export type OutputListener = (event: OutputEvent) => void

/** Stops and restarts reading the process's output (its pipes or terminal). */
export interface OutputFlow {
  pause(): void
  resume(): void
}

/**
 * Fans a process's output out to whoever is subscribed at the moment it is produced. Output
 * produced with nobody subscribed is dropped: envd keeps no replay buffer (wire contract §3.5).
 * The end is kept, so a late subscriber still learns how the process ended. A subscriber that
 * falls behind pauses reading, so a slow client slows the process instead of growing envd.
 */
export class ProcessOutput {
  private readonly listeners = new Set<OutputListener>()
  private readonly congested = new Set<OutputListener>()
  private endStatus: ExitStatus | undefined
  private flow: OutputFlow | undefined

  /** @param maxChunk the largest `data` event, in bytes (32 KiB for pipes, 16 KiB for PTYs). */
  constructor(private readonly maxChunk: number) {}

  /** How the process ended, once it has. */
  get end(): ExitStatus | undefined {
    return this.endStatus
  }

  /** Connects the reader that `congestion` pauses and resumes. */
  attachFlow(flow: OutputFlow): void {
    this.flow = flow
    if (this.congested.size > 0) flow.pause()
  }

  /** Adds a listener; an ended process delivers its end at once. Returns the unsubscribe. */
  subscribe(listener: OutputListener): () => void {
    if (this.endStatus !== undefined) {
      listener({ case: 'end', status: this.endStatus })
      return () => {}
    }
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
      this.congestion(listener, false)
    }
  }

  /** A listener reports it is behind (`true`) or caught up; reading pauses while any is behind. */
  congestion(listener: OutputListener, behind: boolean): void {
    const wasPaused = this.congested.size > 0
    if (behind && this.listeners.has(listener)) this.congested.add(listener)
    else this.congested.delete(listener)
    const paused = this.congested.size > 0
    if (paused !== wasPaused) {
      if (paused) this.flow?.pause()
      else this.flow?.resume()
    }
  }

  /** Publishes output, split into events of at most `maxChunk` bytes. */
  publish(kind: OutputKind, data: Uint8Array): void {
    if (this.endStatus !== undefined) return
    for (let offset = 0; offset < data.length; offset += this.maxChunk) {
      const chunk = data.subarray(offset, offset + this.maxChunk)
      for (const listener of this.listeners) listener({ case: 'data', kind, chunk })
    }
  }

  /** Publishes the end and drops every listener: nothing follows it. */
  finish(status: ExitStatus): void {
    if (this.endStatus !== undefined) return
    this.endStatus = status
    for (const listener of this.listeners) listener({ case: 'end', status })
    this.listeners.clear()
    this.congested.clear()
  }
}
