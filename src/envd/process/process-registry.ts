import type { ManagedProcess } from './managed-process.js'

/** How long an exited process stays connectable (wire contract §3.5). */
export const EXITED_RETENTION_MS = 30_000

/**
 * Every process envd started, by pid. A process stays here until `retentionMs` after it ends,
 * so a late `Connect` still receives its start and end; `running()` leaves ended ones out.
 */
export class ProcessRegistry {
  private readonly processes = new Map<number, ManagedProcess>()

  constructor(private readonly retentionMs = EXITED_RETENTION_MS) {}

  add(process: ManagedProcess): void {
    this.processes.set(process.pid, process)
    process.output.subscribe((event) => {
      if (event.case !== 'end') return
      // The kernel may reuse the pid; only this process's own entry is removed.
      const timer = setTimeout(() => {
        if (this.processes.get(process.pid) === process) this.processes.delete(process.pid)
      }, this.retentionMs)
      timer.unref()
    })
  }

  /** The process with this pid, ended or not. */
  byPid(pid: number): ManagedProcess | undefined {
    return this.processes.get(pid)
  }

  /** The newest process with this tag, preferring one still running. */
  byTag(tag: string): ManagedProcess | undefined {
    const tagged = [...this.processes.values()].filter((p) => p.tag === tag)
    return tagged.findLast((p) => p.output.end === undefined) ?? tagged.at(-1)
  }

  /** Processes that have not ended, in start order. */
  running(): ManagedProcess[] {
    return [...this.processes.values()].filter((p) => p.output.end === undefined)
  }
}
