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
        const slot = await slots.reserve('team')
        await sleep(10)
        await slot.commit(async () => {
          stored.add(`s${i}`)
        })
      }),
    )
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(2)
    const refusals = outcomes.flatMap((outcome) =>
      outcome.status === 'rejected' && outcome.reason instanceof ApiError ? [outcome.reason] : [],
    )
    expect(refusals).toHaveLength(4)
    expect(refusals[0]?.status).toBe(429)
  })

  it('counts a sandbox once while its row is stored, however creates interleave', async () => {
    const stored = new Set<string>()
    const slots = new SandboxSlots(2, async () => stored.size)
    const first = await slots.reserve('team')
    // The second create counts while the first stores its row: it must see one sandbox.
    const storing = first.commit(async () => {
      stored.add('first')
    })
    const second = slots.reserve('team')
    await storing
    await expect(second).resolves.toBeDefined()
  })

  it('frees a slot whose create failed', async () => {
    const slots = new SandboxSlots(1, async () => 0)
    const slot = await slots.reserve('team')
    await expect(slots.reserve('team')).rejects.toBeInstanceOf(ApiError)
    await slot.release()
    await slot.release()
    await expect(slots.reserve('team')).resolves.toBeDefined()
    await expect(slots.reserve('team')).rejects.toBeInstanceOf(ApiError)
  })

  it('counts each team on its own', async () => {
    const slots = new SandboxSlots(1, async () => 0)
    await slots.reserve('a')
    await expect(slots.reserve('b')).resolves.toBeDefined()
  })
})
