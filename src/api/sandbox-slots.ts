import { apiErrors } from './errors.js'

/** A slot under a team's limit, held until the sandbox counts as running or its start failed. */
export interface SlotReservation {
  /**
   * Runs `work`, the store write after which the sandbox counts as running or starting, and
   * gives the slot back in the same step, whether `work` succeeds or not: no count between
   * the two sees the sandbox twice (once stored, once reserved).
   */
  commit<T>(work: () => Promise<T>): Promise<T>
  /** Gives the slot back without a write (the start failed); nothing after a commit. */
  release(): Promise<void>
}

/**
 * The per-team concurrent-sandbox limit (wire contract §1.4: over it, create answers 429).
 * Counting, reserving and committing run one at a time, so two creates in flight can never
 * both take the last slot, and parallel creates (a fork's) never see each other twice.
 */
export class SandboxSlots {
  private readonly reserved = new Map<string, number>()
  private queue: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly limit: number,
    private readonly countRunning: (teamID: string) => Promise<number>,
  ) {}

  /** Takes a slot or throws the contract's 429. */
  async reserve(teamID: string): Promise<SlotReservation> {
    await this.exclusive(async () => {
      const inFlight = this.reserved.get(teamID) ?? 0
      const running = await this.countRunning(teamID)
      if (running + inFlight >= this.limit) throw apiErrors.concurrencyLimit(this.limit)
      this.reserved.set(teamID, inFlight + 1)
    })
    let held = true
    const giveBack = () => {
      if (!held) return
      held = false
      const left = (this.reserved.get(teamID) ?? 1) - 1
      if (left === 0) this.reserved.delete(teamID)
      else this.reserved.set(teamID, left)
    }
    return {
      commit: (work) =>
        this.exclusive(async () => {
          try {
            return await work()
          } finally {
            giveBack()
          }
        }),
      release: () => this.exclusive(async () => giveBack()),
    }
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work)
    this.queue = run.catch(() => undefined)
    return run
  }
}
