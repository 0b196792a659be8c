import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createLogger } from '../../../src/logger.js'
import { readyTemplate, type TemplateApp, templateApp } from './templates/template-app.js'

let t: TemplateApp

beforeEach(async () => {
  t = await templateApp({ warmPools: { sizes: new Map([['interp', 2]]), memoryBudgetMB: 4096 } })
})

afterEach(async () => {
  await t.close()
})

/** A refill after a take waits a moment (warm-pools.ts), then starts its sandbox. */
const REFILL_WAIT = { timeout: 3_000 }

const create = (body: Record<string, unknown>) =>
  t.call('POST', '/sandboxes', { templateID: 'interp', ...body })

describe('warm pools', () => {
  it('keeps the template’s sandboxes started, and a create takes one with its own settings', async () => {
    const { templateID } = await readyTemplate(t, 'interp')
    t.warmPools.start()
    await vi.waitFor(() => expect(t.created).toHaveLength(2))
    const pooled = t.created.map((request) => request.sandboxID)
    // Started as the template's sandboxes, with its env and no client's settings yet.
    expect(t.created[0]).toMatchObject({
      template: { templateID, layers: ['layer-a', 'layer-b'] },
      envVars: { FROM_TEMPLATE: 'yes', SHARED: 'template' },
      warm: true,
    })
    expect(t.created[0]?.accessToken).toBeUndefined()

    const asked = performance.now()
    const response = await create({
      envVars: { FOO: 'bar' },
      secure: true,
      allow_internet_access: false,
    })
    expect(response.status).toBe(201)
    const sandbox = await response.json()
    expect(pooled).toContain(sandbox.sandboxID)
    expect(t.agentLog.claimed).toEqual([
      {
        sandboxID: sandbox.sandboxID,
        claim: {
          envVars: { FROM_TEMPLATE: 'yes', SHARED: 'template', FOO: 'bar' },
          accessToken: sandbox.envdAccessToken,
          egress: { allowOut: [], denyOut: ['0.0.0.0/0'] },
        },
      },
    ])
    expect(await t.store.getSandbox(sandbox.sandboxID, t.team.id)).toMatchObject({
      state: 'running',
      envVars: { FOO: 'bar' },
    })
    // The pool starts a replacement once the client has had a moment for its first commands
    // (150 ms after the take, which came after `asked`); nothing else was created for the client.
    await vi.waitFor(() => expect(t.created).toHaveLength(3), REFILL_WAIT)
    expect(performance.now() - asked).toBeGreaterThanOrEqual(100)
    expect(t.created.filter((request) => request.sandboxID === sandbox.sandboxID)).toHaveLength(1)
  })

  it('refills while creates keep coming, so each create at a steady pace takes a started sandbox', async () => {
    await readyTemplate(t, 'interp')
    t.warmPools.start()
    await vi.waitFor(() => expect(t.created).toHaveLength(2))
    // Takes 400 ms apart, as a client's create → run → kill loop; none waits for a pause.
    for (let take = 0; take < 5; take++) {
      if (take > 0) await sleep(400)
      expect((await create({})).status).toBe(201)
    }
    expect(t.agentLog.claimed).toHaveLength(5)
  })

  it('replaces the members of an older build once a newer one is ready', async () => {
    await readyTemplate(t, 'interp')
    t.warmPools.start()
    await vi.waitFor(() => expect(t.created).toHaveLength(2))
    const old = t.created.map((request) => request.sandboxID)
    await readyTemplate(t, 'interp')
    // A create of the new build finds no member of it, and starts cold…
    expect((await create({})).status).toBe(201)
    expect(t.agentLog.claimed).toEqual([])
    // …while the pool removes the old build's members and starts the new one's.
    await vi.waitFor(() => expect(t.agentLog.killed.sort()).toEqual([...old].sort()), REFILL_WAIT)
    await vi.waitFor(() => expect(t.created).toHaveLength(5), REFILL_WAIT)
  })

  it('starts a sandbox cold, with the same ID, when a pooled one cannot be claimed', async () => {
    await readyTemplate(t, 'interp')
    t.warmPools.start()
    await vi.waitFor(() => expect(t.created).toHaveLength(2))
    t.agentLog.claimError = new Error('envd did not answer')
    const response = await create({})
    expect(response.status).toBe(201)
    const { sandboxID } = await response.json()
    expect(t.agentLog.killed).toContain(sandboxID)
    expect(t.created.filter((request) => request.sandboxID === sandboxID)).toHaveLength(2)
  })

  it('keeps no more members than the memory budget holds, and tells the operator once', async () => {
    await t.close()
    const lines: Record<string, unknown>[] = []
    const logger = createLogger('sandbar', {
      destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
    })
    // The builds' sandboxes have 1024 MiB each (buildResult's template sizes): room for one.
    t = await templateApp({
      warmPools: { sizes: new Map([['interp', 2]]), memoryBudgetMB: 1500 },
      logger,
    })
    const { templateID } = await readyTemplate(t, 'interp')
    t.warmPools.start()
    await vi.waitFor(() => expect(t.created).toHaveLength(1))
    // A take and its refill meet the budget again: still one warning.
    expect((await create({})).status).toBe(201)
    await vi.waitFor(() => expect(t.created).toHaveLength(2), REFILL_WAIT)
    await sleep(50)
    expect(t.created).toHaveLength(2)
    const warnings = lines.filter((line) => line.level === 40)
    expect(warnings).toEqual([
      expect.objectContaining({
        templateID,
        kept: 1,
        asked: 2,
        memoryMB: 1024,
        budgetMB: 1500,
        msg: expect.stringContaining('raise it to keep more'),
      }),
    ])
  })

  it('keeps nothing for a template with no ready build, and leaves its members at close', async () => {
    t.warmPools.start()
    await sleep(50)
    expect(t.created).toEqual([])
    await readyTemplate(t, 'interp')
    expect((await create({})).status).toBe(201)
    await vi.waitFor(() => expect(t.created).toHaveLength(3), REFILL_WAIT)
    await t.warmPools.close()
    // Sandboxes outlive the service; the next start's pools adopt them.
    expect(t.agentLog.killed).toEqual([])
  })
})
