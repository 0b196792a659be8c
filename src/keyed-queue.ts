/**
 * Runs work one piece at a time per key, in call order, while different keys run side by side.
 * A piece that fails does not stop the next one on its key.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>()

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve()
    const next = previous.catch(() => undefined).then(work)
    this.tails.set(key, next)
    const forget = (): void => {
      if (this.tails.get(key) === next) this.tails.delete(key)
    }
    next.then(forget, forget)
    return next
  }

  /** Settles once everything queued so far has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.tails.values())
  }
}
