import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { sandbox } from '../../../store/store-fixture.js'
import { runningSandbox, type SnapshotLog, snapshotAgent, storedSandbox } from './snapshot-agent.js'
import { type Json, type TemplateApp, templateApp } from './template-app.js'

let t: TemplateApp
let log: SnapshotLog
beforeEach(async () => {
  log = { snapshots: [], removed: [] }
  t = await templateApp({ agent: snapshotAgent(log) })
})
afterEach(async () => {
  await t.close()
})

async function fork(sandboxID: string, body?: Record<string, unknown>) {
  const response = await t.call('POST', `/sandboxes/${sandboxID}/fork`, body)
  return { status: response.status, body: await response.json() }
}

describe('POST /sandboxes/{id}/fork', () => {
  it('snapshots the source once and starts count sandboxes of its own from it', async () => {
    const source = await runningSandbox(t, {
      envVars: { FROM_CREATE: 'yes' },
      metadata: { app: 'x' },
      allow_internet_access: false,
    })
    const { status, body } = await fork(source.sandboxID, { count: 2, timeout: 60 })
    expect(status).toBe(201)
    expect(body).toHaveLength(2)
    const forks = body.map((result: Json) => result.sandbox)
    for (const reply of forks) {
      expect(reply).toEqual({
        templateID: source.templateID,
        sandboxID: expect.stringMatching(/^i[a-z0-9]{20}$/),
        alias: 'app',
        clientID: expect.any(String),
        envdVersion: expect.any(String),
        envdAccessToken: expect.stringMatching(/^[0-9a-f]{64}$/),
        trafficAccessToken: null,
        domain: 'sandbar.test',
      })
    }
    const ids = new Set([source.sandboxID, ...forks.map((reply: Json) => reply.sandboxID)])
    expect(ids.size).toBe(3)

    expect(log.snapshots).toHaveLength(1)
    const [taken] = log.snapshots
    expect(taken?.sandboxID).toBe(source.sandboxID)
    expect(taken?.snapshotID).toMatch(/^fork-[0-9a-f-]{36}$/)
    expect(log.removed).toEqual([taken?.snapshotID])
    for (const reply of forks) {
      const request = t.created.find((entry) => entry.sandboxID === reply.sandboxID)
      expect(request).toMatchObject({
        template: {
          templateID: source.templateID,
          layers: ['layer-a', 'layer-b', taken?.layerID],
          defaultUser: 'app',
          defaultWorkdir: '/srv',
          snapshotID: taken?.snapshotID,
        },
        cpuCount: 4,
        memoryMB: 2048,
        envVars: { FROM_TEMPLATE: 'yes', SHARED: 'template', FROM_CREATE: 'yes' },
        accessToken: reply.envdAccessToken,
        egress: { allowOut: [], denyOut: ['0.0.0.0/0'] },
      })
      const stored = await t.store.getSandbox(reply.sandboxID, t.team.id)
      expect(stored).toMatchObject({
        state: 'running',
        metadata: { app: 'x' },
        buildID: source.buildID,
        allowInternetAccess: false,
      })
      const lifetime = (stored?.endAt.getTime() ?? 0) - (stored?.startedAt.getTime() ?? 0)
      expect(lifetime).toBe(60_000)
    }
    // The source runs on as it was.
    expect(await t.store.getSandbox(source.sandboxID)).toMatchObject({ state: 'running' })
  })

  it('reports a fork that fails to start in its own entry, beside the ones that started', async () => {
    const source = await runningSandbox(t)
    // Nine of the fixture's ten slots taken: the first fork gets the last, the second none.
    for (let other = 0; other < 8; other++) await t.store.insertSandbox(sandbox(t.team.id, other))
    const { status, body } = await fork(source.sandboxID, { count: 2 })
    expect(status).toBe(201)
    const outcomes = body.map((result: Json) => Object.keys(result))
    expect(outcomes.sort()).toEqual([['error'], ['sandbox']])
    const failed = body.find((result: Json) => result.error !== undefined)
    expect(failed.error).toMatchObject({ code: 429 })
    expect(failed.error.message).toMatch(/maximum number of concurrent sandboxes/)
    expect(log.removed).toEqual([log.snapshots[0]?.snapshotID])
  })

  it('refuses what cannot be forked with the contract’s status and infra’s words', async () => {
    const source = await runningSandbox(t)
    const refusal = async (sandboxID: string, body?: Record<string, unknown>) =>
      (await fork(sandboxID, body)).body
    expect(await refusal(source.sandboxID, { count: 0 })).toEqual({
      code: 400,
      message: 'Count must be at least 1',
    })
    expect(await refusal(source.sandboxID, { count: 101 })).toEqual({
      code: 400,
      message: 'Count cannot be greater than 100',
    })
    // The fixture's limit is 10 sandboxes, one of them the source.
    expect(await refusal(source.sandboxID, { count: 10 })).toEqual({
      code: 400,
      message: 'Count must be lower than the maximum number of concurrent sandboxes (10)',
    })
    expect(await refusal(source.sandboxID, { timeout: 0 })).toEqual({
      code: 400,
      message: 'Timeout must be greater than 0',
    })
    expect((await fork(source.sandboxID, { count: 'two' })).status).toBe(400)
    expect(await refusal('inosuchsandbox0000000')).toEqual({
      code: 404,
      message: 'Sandbox "inosuchsandbox0000000" doesn\'t exist or you don\'t have access to it',
    })
    const paused = await storedSandbox(t, 'paused')
    expect(await refusal(paused)).toEqual({
      code: 409,
      message: `Sandbox '${paused}' is paused and cannot be forked; resume it first`,
    })
    const mounting = await storedSandbox(t, 'volume')
    expect((await refusal(mounting)).message).toMatch(
      new RegExp(`^Sandbox '${mounting}' cannot be forked: it mounts volumes`),
    )
    expect(log.snapshots).toEqual([])
  })
})
