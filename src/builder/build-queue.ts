/** A job waiting for or holding one of the queue's slots. */
interface QueuedJob {
  id: string
  teamID: string
  run: () => Promise<void>
}

/**
 * Runs at most `concurrency` jobs at once; a free slot goes to the waiting team served least
 * recently, so one team's burst of builds cannot hold every slot while another team waits.
 */
export class FairQueue {
  /** Waiting jobs per team, in the order each team submitted them. */
  private readonly waiting = new Map<string, QueuedJob[]>()
  /** Teams with waiting jobs, in the order they first waited. */
  private readonly turns: string[] = []
  private readonly running = new Map<string, QueuedJob>()
  /** When each team last had a job started (a count of starts), for least-recently-served. */
  private readonly lastServed = new Map<string, number>()
  private starts = 0

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
      const teamID = this.nextTeam()
      if (teamID === undefined) return
      const queue = this.waiting.get(teamID) ?? []
      const job = queue.shift()
      if (queue.length === 0) this.forget(teamID)
      if (job === undefined) continue
      this.lastServed.set(teamID, this.starts++)
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

  /** The waiting team served least recently; never served comes first, then waiting order. */
  private nextTeam(): string | undefined {
    let best: string | undefined
    for (const teamID of this.turns) {
      const served = this.lastServed.get(teamID) ?? -1
      if (best === undefined || served < (this.lastServed.get(best) ?? -1)) best = teamID
    }
    return best
  }

  private forget(teamID: string): void {
    this.waiting.delete(teamID)
    const turn = this.turns.indexOf(teamID)
    if (turn !== -1) this.turns.splice(turn, 1)
  }
}
