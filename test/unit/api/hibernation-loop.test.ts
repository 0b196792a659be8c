import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import type { Agent, SandboxInfo } from '../../../src/agent/index.js'
import { startHibernationLoop } from '../../../src/api/hibernation-loop.js'
import type { Store } from '../../../src/store/index.js'

/** A paused sandbox as the agent lists it, paused `pausedAgoMs` ago as the store has it. */
interface Paused {
  sandboxID: string
  pausedAgoMs: number
  filesOnly?: boolean
}

/** Runs the loop until it has hibernated `expected` sandboxes (or 3 s), returning their order. */
async function hibernatedBy(
  sandboxes: Paused[],
  options: { afterMs: number; short: number },
  expected: number,
): Promise<string[]> {
  const now = Date.now()
  const hibernated: string[] = []
  let shortChecks = options.short
  const agent = {
    list: async () =>
      sandboxes
        .filter(({ sandboxID }) => !hibernated.includes(sandboxID))
        .map(
          ({ sandboxID, filesOnly = false }) =>
            ({ sandboxID, state: 'paused', hibernated: false, filesOnly }) as SandboxInfo,
        ),
    hibernate: async (sandboxID: string) => {
      hibernated.push(sandboxID)
    },
  } as unknown as Agent
  const store = {
    getSandbox: async (sandboxID: string) => {
      const sandbox = sandboxes.find((s) => s.sandboxID === sandboxID)
      return sandbox && { endAt: new Date(now - sandbox.pausedAgoMs) }
    },
  } as unknown as Store
  // Short of memory for the first `short` checks, as if each hibernation freed some.
  const memoryShort = async () => shortChecks-- > 0
  const loop = startHibernationLoop(
    store,
    agent,
    options.afterMs,
    pino({ level: 'silent' }),
    memoryShort,
  )
  const deadline = Date.now() + 3_000
  while (hibernated.length < expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  await loop.stop()
  return hibernated
}

describe('hibernation loop', () => {
  const sandboxes: Paused[] = [
    { sandboxID: 'recent', pausedAgoMs: 1_000 },
    { sandboxID: 'oldest', pausedAgoMs: 60_000 },
    { sandboxID: 'older', pausedAgoMs: 30_000 },
    { sandboxID: 'files', pausedAgoMs: 90_000, filesOnly: true },
  ]

  it('hibernates only sandboxes paused longer than the delay while memory is plenty', async () => {
    expect(await hibernatedBy(sandboxes, { afterMs: 45_000, short: 0 }, 1)).toEqual(['oldest'])
  })

  it('hibernates the oldest pauses early while the host is short of memory, and stops after', async () => {
    const order = await hibernatedBy(sandboxes, { afterMs: 600_000, short: 2 }, 2)
    expect(order).toEqual(['oldest', 'older'])
  })
})
