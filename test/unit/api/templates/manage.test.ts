import { readdir } from 'node:fs/promises'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BUILD_FAILURES } from '../../../../src/api/template-builds.js'
import { sandbox } from '../../../store/store-fixture.js'
import { readyTemplate, type TemplateApp, templateApp } from './template-app.js'

let t: TemplateApp
beforeEach(async () => {
  t = await templateApp()
})
afterEach(async () => {
  await t.close()
})

async function json(method: string, route: string, body?: unknown) {
  const response = await t.call(method, route, body)
  return { status: response.status, body: await response.json(), headers: response.headers }
}

describe('GET /templates and GET /v2/templates', () => {
  it('lists the team’s templates with their newest ready build', async () => {
    const { templateID, buildID } = await readyTemplate(t, 'app', undefined, { cpuCount: 4 })
    // A newer build still waiting does not replace the ready one in the list.
    await t.call('POST', '/v3/templates', { name: 'app' })
    const { status, body } = await json('GET', '/templates')
    expect(status).toBe(200)
    expect(body).toEqual([
      {
        templateID,
        buildID,
        cpuCount: 4,
        memoryMB: 1024,
        diskSizeMB: 512,
        public: false,
        aliases: ['app'],
        names: [`${t.team.slug}/app`],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        createdBy: null,
        lastSpawnedAt: null,
        spawnCount: 0,
        buildCount: 2,
        envdVersion: '',
        buildStatus: 'ready',
      },
    ])
  })

  it('pages with limit and X-Next-Token until every template was seen once', async () => {
    for (const name of ['a', 'b', 'c']) await t.call('POST', '/v3/templates', { name })
    const seen: string[] = []
    let token: string | null = null
    do {
      const query: string = token === null ? '?limit=2' : `?limit=2&nextToken=${token}`
      const page = await json('GET', `/v2/templates${query}`)
      expect(page.body.length).toBeLessThanOrEqual(2)
      seen.push(...page.body.map((item: { aliases: string[] }) => item.aliases[0]))
      token = page.headers.get('X-Next-Token')
    } while (token !== null)
    expect(seen.sort()).toEqual(['a', 'b', 'c'])
    expect((await json('GET', '/v2/templates?nextToken=bogus')).status).toBe(400)
    expect((await json('GET', '/v2/templates?limit=0')).status).toBe(400)
  })
})

describe('GET /templates/{t}', () => {
  it('answers the template with its builds, paged', async () => {
    const { templateID, buildID } = await readyTemplate(t, 'app')
    const second = await (await t.call('POST', '/v3/templates', { name: 'app' })).json()
    const first = await json('GET', `/templates/${templateID}?limit=1`)
    expect(first.body).toMatchObject({
      templateID,
      public: false,
      aliases: ['app'],
      names: [`${t.team.slug}/app`],
      spawnCount: 0,
      lastSpawnedAt: null,
      builds: [{ buildID: second.buildID, status: 'waiting', cpuCount: 2, memoryMB: 1024 }],
    })
    const token = first.headers.get('X-Next-Token')
    expect(token).not.toBeNull()
    const rest = await json('GET', `/templates/${templateID}?limit=1&nextToken=${token}`)
    expect(rest.body.builds).toEqual([
      expect.objectContaining({ buildID, status: 'ready', finishedAt: expect.any(String) }),
    ])
    expect(rest.headers.get('X-Next-Token')).toBeNull()
    expect((await json('GET', '/templates/nosuchtemplate')).body).toEqual({
      code: 404,
      message: "Template 'nosuchtemplate' not found",
    })
  })
})

describe('PATCH /templates/{t} and /v2/templates/{t}', () => {
  it('makes a template public: v1 answers null, v2 its names', async () => {
    const { templateID } = await readyTemplate(t, 'app')
    const v1 = await t.call('PATCH', `/templates/${templateID}`, { public: true })
    expect(v1.status).toBe(200)
    expect(await v1.text()).toBe('null')
    expect((await t.store.getTemplate(templateID))?.public).toBe(true)
    expect(await json('PATCH', `/v2/templates/${templateID}`, { public: false })).toMatchObject({
      status: 200,
      body: { names: [`${t.team.slug}/app`] },
    })
    expect((await t.store.getTemplate(templateID))?.public).toBe(false)
    expect((await json('PATCH', `/templates/${templateID}`, { public: 'yes' })).status).toBe(400)
  })
})

describe('DELETE /templates/{t}', () => {
  it('soft-deletes: its name is free, its active builds cancelled, its uploads removed', async () => {
    const { templateID } = await readyTemplate(t, 'app')
    const waiting = await (
      await t.call('POST', '/v3/templates', { name: 'app', tags: ['x'] })
    ).json()
    const running = await (
      await t.call('POST', '/v3/templates', { name: 'app', tags: ['y'] })
    ).json()
    await t.call('POST', `/v2/templates/${templateID}/builds/${running.buildID}`, {
      fromImage: 'a',
    })
    await t.builder.build(running.buildID).reporter.started()
    await t.builder.files.write(templateID, 'c'.repeat(64), oneChunk('z'), 1)

    const response = await t.call('DELETE', `/templates/${templateID}`)
    expect(response.status).toBe(204)
    expect((await t.store.getTemplate(templateID))?.deletedAt).toBeInstanceOf(Date)
    for (const { buildID } of [waiting, running]) {
      expect(await t.store.getBuild(buildID)).toMatchObject({
        status: 'error',
        failure: { message: BUILD_FAILURES.templateDeleted },
      })
    }
    expect(t.builder.cancelled.map((entry) => entry.buildID)).toContain(running.buildID)
    expect(await readdir(t.filesDir)).toEqual([])
    expect((await json('GET', `/templates/${templateID}`)).status).toBe(404)
    expect((await json('DELETE', `/templates/${templateID}`)).status).toBe(404)
    const again = await json('POST', '/v3/templates', { name: 'app' })
    expect(again.body.templateID).not.toBe(templateID)
  })

  it.each(['running', 'paused'] as const)('refuses while %s sandboxes use it', async (state) => {
    const { templateID } = await readyTemplate(t, 'app')
    await t.store.insertSandbox(sandbox(t.team.id, 0, { templateID, state }))
    expect(await json('DELETE', `/templates/${templateID}`)).toEqual({
      status: 400,
      headers: expect.anything(),
      body: {
        code: 400,
        message: `cannot delete template '${templateID}' because there are ${state} sandboxes using it`,
      },
    })
    expect((await t.store.getTemplate(templateID))?.deletedAt).toBeNull()
  })

  it('refuses another team’s template', async () => {
    const other = await t.store.createTeam('Other', 'other-team')
    const now = new Date()
    await t.store.insertTemplate({
      templateID: 'othertemplate0000000',
      teamID: other.id,
      name: 'theirs',
      public: true,
      createdAt: now,
      updatedAt: now,
      lastSpawnedAt: null,
      spawnCount: 0,
      deletedAt: null,
      sourceSandboxID: null,
    })
    expect((await json('DELETE', '/templates/othertemplate0000000')).body).toEqual({
      code: 403,
      message: 'User does not have access to the template',
    })
  })
})

async function* oneChunk(text: string): AsyncIterable<Uint8Array> {
  yield Buffer.from(text)
}
