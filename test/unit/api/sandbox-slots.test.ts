import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../src/api/index.js'
import { SandboxSlots } from '../../../src/api/sandbox-slots.js'

// Wire contract §1.4: the concurrent-sandbox limit holds even for creates in flight.
describe('SandboxSlots', () => {
  it('gives the last slot to one of many simultaneous creates', async () => {
    const stored = new Set<string>()
    // A count that takes a while, as a database read does.
    const slots = new SandboxSlots(2, async () => {
      await sleep(5)
      return stored.size
    })
    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, async (_, i) => {
        const release = await slots.reserve('team')
        await sleep(10)
        stored.add(`s${i}`)
        await release()
      }),
    )
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(2)
    const refusals = outcomes.flatMap((outcome) =>
      outcome.status === 'rejected' && outcome.reason instanceof ApiError ? [outcome.reason] : [],
    )
    expect(refusals).toHaveLength(4)
    expect(refusals[0]?.status).toBe(429)
  })

  it('frees a slot whose create failed', async () => {
    const slots = new SandboxSlots(1, async () => 0)
    const release = await slots.reserve('team')
    await expect(slots.reserve('team')).rejects.toBeInstanceOf(ApiError)
    await release()
    await expect(slots.reserve('team')).resolves.toBeTypeOf('function')
  })

  it('counts each team on its own', async () => {
    const slots = new SandboxSlots(1, async () => 0)
    await slots.reserve('a')
    await expect(slots.reserve('b')).resolves.toBeTypeOf('function')
  })
})
