import { describe, expect, it } from 'vitest'
import { FairQueue } from '../../../src/builder/build-queue.js'

/** A job that records when it starts and finishes when `finish` is called. */
function job(id: string, teamID: string, started: string[]) {
  let finish = () => {}
  const done = new Promise<void>((resolve) => {
    finish = resolve
  })
  return {
    job: {
      id,
      teamID,
      run: () => {
        started.push(id)
        return done
      },
    },
    finish: () => finish(),
  }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0))

describe('FairQueue', () => {
  it('runs at most its concurrency, and gives teams their turns in rotation', async () => {
    const started: string[] = []
    const queue = new FairQueue(1)
    const jobs = [
      job('a1', 'a', started),
      job('a2', 'a', started),
      job('a3', 'a', started),
      job('b1', 'b', started),
      job('c1', 'c', started),
    ]
    for (const { job: queued } of jobs) queue.push(queued)
    expect(started).toEqual(['a1'])
    expect(queue.count('a')).toBe(3)
    for (const { finish } of jobs) {
      finish()
      await tick()
    }
    // a1 ran first; then b and c get their turn before a's second and third builds.
    expect(started).toEqual(['a1', 'b1', 'c1', 'a2', 'a3'])
    expect(queue.count('a')).toBe(0)
  })

  it('drops a waiting job, not a running one', async () => {
    const started: string[] = []
    const queue = new FairQueue(1)
    const running = job('r', 't', started)
    const waiting = job('w', 't', started)
    queue.push(running.job)
    queue.push(waiting.job)
    expect(queue.remove('r')).toBe(false)
    expect(queue.remove('w')).toBe(true)
    running.finish()
    await tick()
    expect(started).toEqual(['r'])
    expect(queue.count('t')).toBe(0)
  })
})
