import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { startPeriodicPasses } from '../../../src/api/periodic-passes.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const silent = pino({ level: 'silent' })

describe('periodic passes', () => {
  it('skips ticks while a pass runs, and goes on after a pass fails', async () => {
    let running = 0
    let overlapped = false
    let passes = 0
    const loop = startPeriodicPasses(
      'test',
      5,
      async () => {
        running++
        overlapped ||= running > 1
        passes++
        await sleep(25)
        running--
        if (passes === 1) throw new Error('first pass fails')
      },
      silent,
    )
    await sleep(150)
    await loop.stop()
    expect(overlapped).toBe(false)
    expect(passes).toBeGreaterThanOrEqual(2)
    // 150 ms of 25 ms passes: queued ticks would have run many more after stop.
    expect(passes).toBeLessThanOrEqual(7)
    const atStop = passes
    await sleep(30)
    expect(passes).toBe(atStop)
  })

  it('aborts the running pass’s signal at stop and waits for that pass to end', async () => {
    let started = false
    let ended = false
    let abortedInside = false
    const loop = startPeriodicPasses(
      'test',
      5,
      async (stopping) => {
        if (started) return
        started = true
        while (!stopping.aborted) await sleep(5)
        abortedInside = true
        await sleep(20)
        ended = true
      },
      silent,
    )
    while (!started) await sleep(5)
    await loop.stop()
    expect(abortedInside).toBe(true)
    expect(ended).toBe(true)
  })
})
