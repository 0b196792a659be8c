import type { Store } from '../store/index.js'

/** The lifecycle events a sandbox's log records (wire contract §1.3 SandboxLogEntry). */
export type SandboxEvent =
  | 'created'
  | 'paused'
  | 'resumed'
  | 'killed'
  | 'timeout'
  | 'network updated'
  | 'snapshotted'
  | 'forked'

/** Appends lifecycle events to the sandbox logs that `GET /sandboxes/{id}/logs` returns. */
export class SandboxEvents {
  constructor(private readonly store: Store) {}

  record(
    sandbox: { teamID: string; sandboxID: string },
    event: SandboxEvent,
    fields: Record<string, string> = {},
  ): Promise<void> {
    const entry = {
      timestamp: new Date(),
      level: 'info' as const,
      message: `sandbox ${event}`,
      fields: { event, sandboxID: sandbox.sandboxID, ...fields },
    }
    return this.store.appendLogs(sandbox.teamID, sandbox.sandboxID, [entry])
  }
}
