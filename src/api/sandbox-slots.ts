import { apiErrors } from './errors.js'

/**
 * The per-team concurrent-sandbox limit (wire contract §1.4: over it, create answers 429).
 * Counting and reserving run one at a time, and a reservation holds until its create is stored
 * or has failed, so two creates in flight can never both take the last slot.
 */
export class SandboxSlots {
  private readonly reserved = new Map<string, number>()
  private queue: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly limit: number,
    private readonly countRunning: (teamID: string) => Promise<number>,
  ) {}

  /** Takes a slot or throws the contract's 429; call the returned release once, when done. */
  async reserve(teamID: string): Promise<() => Promise<void>> {
    await this.exclusive(async () => {
      const inFlight = this.reserved.get(teamID) ?? 0
      const running = await this.countRunning(teamID)
      if (running + inFlight >= this.limit) throw apiErrors.concurrencyLimit(this.limit)
      this.reserved.set(teamID, inFlight + 1)
    })
    // Released under the same exclusion, so no count runs between a sandbox being stored and
    // its reservation going away.
    return () =>
      this.exclusive(async () => {
        const left = (this.reserved.get(teamID) ?? 1) - 1
        if (left === 0) this.reserved.delete(teamID)
        else this.reserved.set(teamID, left)
      })
  }

  private exclusive(work: () => Promise<void>): Promise<void> {
    const run = this.queue.then(work)
    this.queue = run.catch(() => undefined)
    return run
  }
}
