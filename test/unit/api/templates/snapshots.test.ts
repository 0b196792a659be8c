import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type Agent, SandboxStateError } from '../../../../src/agent/index.js'
import { removeStraySnapshots } from '../../../../src/api/snapshot-collection.js'
import { runningSandbox, type SnapshotLog, snapshotAgent, storedSandbox } from './snapshot-agent.js'
import { type TemplateApp, templateApp } from './template-app.js'

let t: TemplateApp
let log: SnapshotLog
beforeEach(async () => {
  log = { snapshots: [], removed: [] }
  t = await templateApp({ agent: snapshotAgent(log) })
})
afterEach(async () => {
  await t.close()
})

async function json(method: string, route: string, body?: unknown) {
  const response = await t.call(method, route, body)
  return { status: response.status, body: await response.json(), headers: response.headers }
}

const snapshot = (sandboxID: string, body: Record<string, unknown> = {}) =>
  json('POST', `/sandboxes/${sandboxID}/snapshots`, body)

/** Lets the clock move on: lists order by milliseconds. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 5))

describe('POST /sandboxes/{id}/snapshots', () => {
  it('makes a private template of the team with one ready build of what the agent saved', async () => {
    const source = await runningSandbox(t, { envVars: { FROM_CREATE: 'yes' } })
    const { status, body } = await snapshot(source.sandboxID)
    expect(status).toBe(201)
    expect(body.names).toEqual([])
    const [templateID, tag] = body.snapshotID.split(':')
    expect(tag).toBe('default')
    expect(templateID).toMatch(/^[a-z0-9]{20}$/)

    const [taken] = log.snapshots
    expect(taken).toMatchObject({ sandboxID: source.sandboxID })
    expect(taken?.layerID).toMatch(/^c-[0-9a-f]{32}$/)
    expect(await t.store.getTemplate(templateID)).toMatchObject({
      teamID: t.team.id,
      public: false,
      sourceSandboxID: source.sandboxID,
    })
    const builds = await t.store.listBuilds(templateID)
    expect(builds).toEqual([
      expect.objectContaining({
        buildID: taken?.snapshotID,
        status: 'ready',
        cpuCount: 4,
        memoryMB: 2048,
        tags: ['default'],
        result: {
          layers: ['layer-a', 'layer-b', taken?.layerID],
          defaultUser: 'app',
          defaultWorkdir: '/srv',
          envVars: { FROM_TEMPLATE: 'yes', SHARED: 'template', FROM_CREATE: 'yes' },
          snapshot: { sourceSandboxID: source.sandboxID },
        },
      }),
    ])
    // Snapshots are listed by GET /snapshots, not among templates.
    const templates = await json('GET', '/templates')
    expect(templates.body.map((entry: { templateID: string }) => entry.templateID)).toEqual([
      source.templateID,
    ])
    // The source's log tells of it.
    const logs = await json('GET', `/v2/sandboxes/${source.sandboxID}/logs`)
    expect(logs.body.logs.map((entry: { message: string }) => entry.message)).toContain(
      'sandbox snapshotted',
    )
  })

  it('starts sandboxes of a snapshot from its agent snapshot, never from a warm pool', async () => {
    const source = await runningSandbox(t)
    const { body } = await snapshot(source.sandboxID)
    const created = await json('POST', '/v2/sandboxes', { templateID: body.snapshotID })
    expect(created.status).toBe(201)
    const [templateID] = body.snapshotID.split(':')
    expect(created.body).toMatchObject({ templateID, envdAccessToken: expect.any(String) })
    expect(created.body.alias).toBeUndefined()
    expect(t.created.at(-1)).toMatchObject({
      sandboxID: created.body.sandboxID,
      template: {
        templateID,
        layers: ['layer-a', 'layer-b', log.snapshots[0]?.layerID],
        defaultUser: 'app',
        defaultWorkdir: '/srv',
        snapshotID: log.snapshots[0]?.snapshotID,
      },
      cpuCount: 4,
      memoryMB: 2048,
    })
    expect(t.created.at(-1)?.warm).toBeUndefined()
    expect(t.agentLog.claimed).toEqual([])
  })

  it('names a snapshot in the team’s namespace, and a taken name gets a new build', async () => {
    const source = await runningSandbox(t)
    const slug = t.team.slug
    const named = await snapshot(source.sandboxID, { name: 'my-snap' })
    expect(named).toMatchObject({
      status: 201,
      body: { snapshotID: `${slug}/my-snap:default`, names: [`${slug}/my-snap`] },
    })
    const tagged = await snapshot(source.sandboxID, { name: `${slug}/My-Snap:v2` })
    expect(tagged.body).toEqual({ snapshotID: `${slug}/my-snap:v2`, names: [`${slug}/my-snap`] })
    const template = await t.store.findTemplate(t.team.id, 'my-snap')
    const tags = await t.store.listTags(template?.templateID ?? '')
    expect(tags.map((tag) => tag.tag)).toEqual(['default', 'v2'])
    expect(await t.store.listBuilds(template?.templateID ?? '')).toHaveLength(2)
    // An ordinary template's name adds the snapshot to it, as infra does.
    const onApp = await snapshot(source.sandboxID, { name: 'app:snap' })
    expect(onApp.body.snapshotID).toBe(`${slug}/app:snap`)
    expect((await t.store.getTag(source.templateID, 'snap'))?.buildID).toBe(
      log.snapshots.at(-1)?.snapshotID,
    )
  })

  it('removes the images of a named snapshot its tag moved away from', async () => {
    const source = await runningSandbox(t)
    await snapshot(source.sandboxID, { name: 'again' })
    await snapshot(source.sandboxID, { name: 'again' })
    const [first, second] = log.snapshots
    expect(log.removed).toEqual([first?.snapshotID])
    // The newest one stays, and so does an older one another tag still points at.
    await snapshot(source.sandboxID, { name: 'again:keep' })
    await snapshot(source.sandboxID, { name: 'again' })
    expect(log.removed).toEqual([first?.snapshotID, second?.snapshotID])
  })

  it('answers the contract’s refusals', async () => {
    const source = await runningSandbox(t)
    expect(await snapshot('inosuchsandbox0000000')).toEqual({
      status: 404,
      headers: expect.anything(),
      body: {
        code: 404,
        message: 'Sandbox "inosuchsandbox0000000" doesn\'t exist or you don\'t have access to it',
      },
    })
    const paused = await storedSandbox(t, 'paused')
    expect((await snapshot(paused)).body).toEqual({
      code: 409,
      message: `Sandbox '${paused}' cannot be snapshotted while in 'paused' state`,
    })
    const mounting = await storedSandbox(t, 'volume')
    const withVolume = await snapshot(mounting)
    expect(withVolume.status).toBe(400)
    expect(withVolume.body.message).toMatch(
      new RegExp(`^Sandbox '${mounting}' cannot be snapshotted: it mounts volumes`),
    )
    const bad = await snapshot(source.sandboxID, { name: 'not a name' })
    expect(bad.status).toBe(400)
    expect(bad.body.message).toMatch(/^Invalid name: /)
    expect((await snapshot(source.sandboxID, { name: 'someone-else/snap' })).body).toEqual({
      code: 400,
      message: `Template namespace 'someone-else' must be your team's slug '${t.team.slug}'`,
    })
    expect(log.snapshots).toEqual([])
  })

  it('fails the build and frees a new name when the agent refuses or fails', async () => {
    const source = await runningSandbox(t)
    log.failure = new SandboxStateError(source.sandboxID, 'paused', 'snapshot')
    expect((await snapshot(source.sandboxID, { name: 'snap' })).body).toEqual({
      code: 409,
      message: `Sandbox '${source.sandboxID}' cannot be snapshotted while in 'paused' state`,
    })
    expect(await t.store.findTemplate(t.team.id, 'snap')).toBeUndefined()
    log.failure = new Error('criu failed')
    expect((await snapshot(source.sandboxID, { name: 'snap' })).status).toBe(500)
    expect(log.removed).toHaveLength(2)
    // The name is free again, and the next snapshot takes it.
    expect((await snapshot(source.sandboxID, { name: 'snap' })).status).toBe(201)
    const template = await t.store.findTemplate(t.team.id, 'snap')
    expect((await t.store.listBuilds(template?.templateID ?? '')).map((b) => b.status)).toEqual([
      'ready',
    ])
  })
})

describe('GET /snapshots', () => {
  it('lists the team’s snapshots newest first, by source, by name and in pages', async () => {
    const a = await runningSandbox(t)
    const b = (await json('POST', '/v2/sandboxes', { templateID: 'app' })).body.sandboxID
    const first = (await snapshot(a.sandboxID)).body
    await tick()
    const second = (await snapshot(b, { name: 'named' })).body
    await tick()
    const third = (await snapshot(a.sandboxID, { name: 'named:v2' })).body
    const ids = (list: { body: { snapshotID: string }[] }) =>
      list.body.map((entry) => entry.snapshotID)

    // One entry per snapshot template, by the tag pointed at most recently.
    expect(ids(await json('GET', '/snapshots'))).toEqual([third.snapshotID, first.snapshotID])
    expect((await json('GET', '/snapshots')).body[0]).toEqual(third)
    expect(ids(await json('GET', `/snapshots?sandboxID=${a.sandboxID}`))).toEqual([
      first.snapshotID,
    ])
    expect(ids(await json('GET', `/snapshots?sandboxID=${b}`))).toEqual([third.snapshotID])
    expect(ids(await json('GET', '/snapshots?name=named'))).toEqual([third.snapshotID])
    expect(ids(await json('GET', '/snapshots?name=named:default'))).toEqual([second.snapshotID])
    expect(ids(await json('GET', `/snapshots?name=${t.team.slug}%2Fnamed:v2`))).toEqual([
      third.snapshotID,
    ])
    expect(ids(await json('GET', `/snapshots?name=${first.snapshotID}`))).toEqual([
      first.snapshotID,
    ])
    expect((await json('GET', '/snapshots?name=nothing-here')).body).toEqual([])
    expect((await json('GET', '/snapshots?name=named:v9')).body).toEqual([])
    // An ordinary template is no snapshot, even with a snapshot build.
    await snapshot(a.sandboxID, { name: 'app:snap' })
    expect((await json('GET', '/snapshots?name=app')).body).toEqual([])

    const page = await json('GET', '/snapshots?limit=1')
    expect(ids(page)).toEqual([third.snapshotID])
    const token = page.headers.get('X-Next-Token')
    const rest = await json('GET', `/snapshots?limit=1&nextToken=${token}`)
    expect(ids(rest)).toEqual([first.snapshotID])
    expect(rest.headers.get('X-Next-Token')).toBeNull()
    expect((await json('GET', '/snapshots?limit=101')).status).toBe(400)
    expect((await json('GET', '/snapshots?name=not%20a%20name')).body.message).toMatch(
      /^Invalid name: /,
    )
  })
})

describe('DELETE /templates/{snapshotID}', () => {
  it('deletes the snapshot and its agent snapshot: 204, then 404, and creates find nothing', async () => {
    const source = await runningSandbox(t)
    const unnamed = (await snapshot(source.sandboxID)).body.snapshotID
    const named = (await snapshot(source.sandboxID, { name: 'snap' })).body.snapshotID
    for (const [id, taken] of [
      [unnamed, log.snapshots[0]],
      [named, log.snapshots[1]],
    ] as const) {
      const path = `/templates/${encodeURIComponent(id)}`
      expect((await t.call('DELETE', path)).status).toBe(204)
      expect(log.removed.at(-1)).toBe(taken?.snapshotID)
      expect((await t.call('DELETE', path)).status).toBe(404)
      const shown = id.replace(/:default$/, '')
      expect(await json('POST', '/v2/sandboxes', { templateID: id })).toMatchObject({
        status: 404,
        body: { code: 404, message: `template '${shown}' not found` },
      })
    }
    expect((await json('GET', '/snapshots')).body).toEqual([])
  })
})

describe('warm pools', () => {
  it('keep no sandbox of a snapshot ready, even where a pool is sized for its template', async () => {
    const pooled = await templateApp({
      warmPools: { sizes: new Map([['app', 1]]), memoryBudgetMB: 8192 },
      agent: snapshotAgent(log),
    })
    try {
      const source = await runningSandbox(pooled)
      pooled.warmPools.start()
      const warm = () => pooled.created.filter((request) => request.warm === true)
      await vi.waitFor(() => expect(warm()).toHaveLength(1))
      const member = warm()[0]?.sandboxID
      // A snapshot named as the pooled template takes its default tag.
      await pooled.call('POST', `/sandboxes/${source.sandboxID}/snapshots`, { name: 'app' })
      const created = await (
        await pooled.call('POST', '/v2/sandboxes', { templateID: 'app' })
      ).json()
      expect(pooled.agentLog.claimed).toEqual([])
      expect(pooled.created.at(-1)).toMatchObject({
        sandboxID: created.sandboxID,
        template: { snapshotID: log.snapshots[0]?.snapshotID },
      })
      // The pool's next pass removes the member of the older build and starts none.
      await vi.waitFor(() => expect(pooled.agentLog.killed).toContain(member), { timeout: 3_000 })
      expect(warm()).toHaveLength(1)
    } finally {
      await pooled.close()
    }
  })
})

describe('removeStraySnapshots', () => {
  it("removes the agent's snapshots that no live snapshot build names", async () => {
    const source = await runningSandbox(t)
    const kept = await t.call('POST', `/sandboxes/${source.sandboxID}/snapshots`, {})
    const deleted = await t.call('POST', `/sandboxes/${source.sandboxID}/snapshots`, {})
    expect([kept.status, deleted.status]).toEqual([201, 201])
    const [keptID, deletedID] = log.snapshots.map(({ snapshotID }) => snapshotID)
    const { snapshotID } = (await deleted.json()) as { snapshotID: string }
    expect((await t.call('DELETE', `/templates/${encodeURIComponent(snapshotID)}`)).status).toBe(
      204,
    )
    log.removed = []

    const onAgent = [keptID, deletedID, 'fork-left-by-a-crash', 'half-made']
    const agent = {
      snapshots: async () => onAgent,
      removeSnapshot: async (id: string) => {
        log.removed.push(id)
      },
    } as unknown as Agent
    await removeStraySnapshots(t.store, agent, pino({ level: 'silent' }))
    expect(log.removed).toEqual([deletedID, 'fork-left-by-a-crash', 'half-made'])
  })
})
