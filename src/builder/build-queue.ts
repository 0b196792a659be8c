/** A job waiting for or holding one of the queue's slots. */
interface QueuedJob {
  id: string
  teamID: string
  run: () => Promise<void>
}

/**
 * Runs at most `concurrency` jobs at once; waiting jobs start team by team in turn (round
 * robin), so one team's burst of builds cannot hold every slot while another team waits.
 */
export class FairQueue {
  /** Waiting jobs per team, in the order each team submitted them. */
  private readonly waiting = new Map<string, QueuedJob[]>()
  /** Teams in the order they get the next free slot. */
  private readonly turns: string[] = []
  private readonly running = new Map<string, QueuedJob>()

  constructor(private readonly concurrency: number) {}

  push(job: QueuedJob): void {
    const queue = this.waiting.get(job.teamID)
    if (queue === undefined) {
      this.waiting.set(job.teamID, [job])
      this.turns.push(job.teamID)
    } else queue.push(job)
    this.drain()
  }

  /** Drops a job that has not started; false when it runs already or is unknown. */
  remove(id: string): boolean {
    for (const [teamID, queue] of this.waiting) {
      const index = queue.findIndex((job) => job.id === id)
      if (index === -1) continue
      queue.splice(index, 1)
      if (queue.length === 0) this.forget(teamID)
      return true
    }
    return false
  }

  /** Jobs of the team that wait or run. */
  count(teamID: string): number {
    const running = [...this.running.values()].filter((job) => job.teamID === teamID).length
    return running + (this.waiting.get(teamID)?.length ?? 0)
  }

  private drain(): void {
    while (this.running.size < this.concurrency) {
      const teamID = this.turns.shift()
      if (teamID === undefined) return
      const queue = this.waiting.get(teamID) ?? []
      const job = queue.shift()
      if (queue.length > 0) this.turns.push(teamID)
      else this.waiting.delete(teamID)
      if (job === undefined) continue
      this.running.set(job.id, job)
      // A job reports its own failures; the queue only frees the slot.
      void job
        .run()
        .catch(() => undefined)
        .finally(() => {
          this.running.delete(job.id)
          this.drain()
        })
    }
  }

  private forget(teamID: string): void {
    this.waiting.delete(teamID)
    const turn = this.turns.indexOf(teamID)
    if (turn !== -1) this.turns.splice(turn, 1)
  }
}
