import { describe, expect, it } from 'vitest'
import { KeyedQueue } from '../../src/keyed-queue.js'

const tick = () => new Promise((resolve) => setTimeout(resolve, 5))

describe('KeyedQueue', () => {
  it('runs one piece at a time per key, in call order, and keys side by side', async () => {
    const queue = new KeyedQueue()
    const events: string[] = []
    const piece = (name: string) => async () => {
      events.push(`${name} start`)
      await tick()
      events.push(`${name} end`)
      return name
    }
    const results = await Promise.all([
      queue.run('a', piece('a1')),
      queue.run('a', piece('a2')),
      queue.run('b', piece('b1')),
    ])
    expect(results).toEqual(['a1', 'a2', 'b1'])
    expect(events.indexOf('a2 start')).toBeGreaterThan(events.indexOf('a1 end'))
    expect(events.indexOf('b1 start')).toBeLessThan(events.indexOf('a1 end'))
  })

  it('goes on after a failure, and settles once everything queued has', async () => {
    const queue = new KeyedQueue()
    const failed = queue.run('a', async () => {
      await tick()
      throw new Error('boom')
    })
    let ran = false
    const after = queue.run('a', async () => {
      ran = true
    })
    await queue.settled()
    await expect(failed).rejects.toThrow('boom')
    await after
    expect(ran).toBe(true)
  })
})
