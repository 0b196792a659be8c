import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BUILD_FAILURES } from '../../../../src/api/template-builds.js'
import { buildResult, readyTemplate, type TemplateApp, templateApp } from './template-app.js'

let t: TemplateApp
beforeEach(async () => {
  t = await templateApp()
})
afterEach(async () => {
  await t.close()
})

async function register(name = 'app', body: Record<string, unknown> = {}) {
  const response = await t.call('POST', '/v3/templates', { name, ...body })
  return (await response.json()) as { templateID: string; buildID: string }
}

async function status(templateID: string, buildID: string, query = '') {
  const response = await t.call('GET', `/templates/${templateID}/builds/${buildID}/status${query}`)
  return { status: response.status, body: await response.json() }
}

describe('POST /v2/templates/{t}/builds/{b}', () => {
  it('hands the builder the resolved request: image base, steps, sizes, commands', async () => {
    const { templateID, buildID } = await register('app', { cpuCount: 4, memoryMB: 2048 })
    const response = await t.call('POST', `/v2/templates/${templateID}/builds/${buildID}`, {
      fromImage: 'registry.local/app:1',
      fromImageRegistry: { type: 'registry', username: 'u', password: 'p' },
      force: true,
      steps: [
        { type: 'RUN', args: ['echo hi'], force: false, forceUpload: null },
        {
          type: 'COPY',
          args: ['a', 'b', '', ''],
          filesHash: 'f'.repeat(64),
          resolveSymlinks: false,
        },
      ],
      startCmd: 'serve',
      readyCmd: 'ready',
    })
    expect(response.status).toBe(202)
    expect(t.builder.build(buildID).request).toEqual({
      teamID: t.team.id,
      templateID,
      buildID,
      base: {
        kind: 'image',
        image: 'registry.local/app:1',
        registry: { type: 'registry', username: 'u', password: 'p' },
      },
      force: true,
      steps: [
        { type: 'RUN', args: ['echo hi'], filesHash: undefined, force: false },
        { type: 'COPY', args: ['a', 'b', '', ''], filesHash: 'f'.repeat(64), force: false },
      ],
      startCmd: 'serve',
      readyCmd: 'ready',
      cpuCount: 4,
      memoryMB: 2048,
      diskSizeMB: 512,
      version: 'v2.1.0',
    })
  })

  it.each([
    ['e2b-js-sdk/2.2.9', 'v2.0.0'],
    ['e2b-python-sdk/1.9.0', 'v2.0.0'],
    ['e2b-js-sdk/2.3.0', 'v2.1.0'],
    ['e2b-js-sdk/10.0.0', 'v2.1.0'],
    ['curl/8.0', 'v2.1.0'],
  ])('builds for User-Agent %s a %s template', async (userAgent, version) => {
    const { templateID, buildID } = await register()
    await t.call(
      'POST',
      `/v2/templates/${templateID}/builds/${buildID}`,
      { fromImage: 'debian' },
      { 'User-Agent': userAgent },
    )
    expect(t.builder.build(buildID).request.version).toBe(version)
  })

  it('starts from another template: its tag’s ready build', async () => {
    await readyTemplate(t, 'source', buildResult({ layers: ['l1'] }), { tags: ['v2'] })
    const { templateID, buildID } = await register('derived')
    await t.call('POST', `/v2/templates/${templateID}/builds/${buildID}`, {
      fromTemplate: 'source:v2',
    })
    expect(t.builder.build(buildID).request.base).toEqual({
      kind: 'template',
      name: 'source:v2',
      build: buildResult({ layers: ['l1'] }),
    })
  })

  it.each([
    [{ fromImage: 'debian', fromTemplate: 'base' }, BUILD_FAILURES.bothBases],
    [{}, BUILD_FAILURES.noBase],
    [{ fromTemplate: 'nothing-here' }, "template 'nothing-here' not found"],
  ])('fails the build, not the call, for base %o', async (body, message) => {
    const { templateID, buildID } = await register()
    const response = await t.call('POST', `/v2/templates/${templateID}/builds/${buildID}`, body)
    expect(response.status).toBe(202)
    expect(t.builder.submitted).toHaveLength(0)
    const { body: info } = await status(templateID, buildID)
    expect(info.status).toBe('error')
    expect(info.reason).toMatchObject({ message, step: 'base' })
    expect(info.reason.logEntries).toEqual([
      expect.objectContaining({ level: 'error', message, step: 'base' }),
    ])
  })

  it('refuses unknown builds and templates, another team’s, and a build already started', async () => {
    const { templateID, buildID } = await register()
    const start = (tid: string, bid: string) =>
      t.call('POST', `/v2/templates/${tid}/builds/${bid}`, { fromImage: 'debian' })
    expect((await start(templateID, 'not-a-uuid')).status).toBe(400)
    const unknownBuild = await start(templateID, '0b3c7a1e-2f4d-4e5a-9b6c-7d8e9f0a1b2c')
    expect(await unknownBuild.json()).toEqual({
      code: 404,
      message: "Build '0b3c7a1e-2f4d-4e5a-9b6c-7d8e9f0a1b2c' not found",
    })
    expect(await (await start('nosuchtemplate', buildID)).json()).toEqual({
      code: 404,
      message: "Template 'nosuchtemplate' not found",
    })
    expect((await start(templateID, buildID)).status).toBe(202)
    expect(await (await start(templateID, buildID)).json()).toEqual({
      code: 400,
      message: 'build is not in waiting state',
    })
    const other = await t.store.createTeam('Other', 'other-team')
    await t.store.insertTemplate({
      templateID: 'othertemplate0000000',
      teamID: other.id,
      name: 'theirs',
      public: true,
      createdAt: new Date(),
      updatedAt: new Date(),
      lastSpawnedAt: null,
      spawnCount: 0,
      deletedAt: null,
      sourceSandboxID: null,
    })
    expect(await (await start('othertemplate0000000', buildID)).json()).toEqual({
      code: 403,
      message: 'User does not have access to the template',
    })
  })
})

describe('the build reporter and GET .../status', () => {
  it('answers a registered build as waiting with no logs', async () => {
    const { templateID, buildID } = await register()
    expect(await status(templateID, buildID)).toEqual({
      status: 200,
      body: { templateID, buildID, status: 'waiting', logs: [], logEntries: [] },
    })
  })

  it('follows a build to ready: building, log lines in order and paged, tags assigned', async () => {
    const { templateID, buildID } = await register('app', { tags: ['v1'] })
    await t.call('POST', `/v2/templates/${templateID}/builds/${buildID}`, { fromImage: 'debian' })
    const { reporter } = t.builder.build(buildID)
    await reporter.started()
    expect((await status(templateID, buildID)).body.status).toBe('building')
    for (let i = 0; i < 5; i++) reporter.log({ level: 'info', message: `line ${i}`, step: '1' })
    reporter.log({ level: 'debug', message: 'detail', step: '1' })
    // The lines are written within the flush interval, without waiting for the end.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const page = await status(templateID, buildID, '?logsOffset=2&limit=2')
    expect(page.body.logEntries.map((entry: { message: string }) => entry.message)).toEqual([
      'line 2',
      'line 3',
    ])
    const infoOnly = await status(templateID, buildID, '?level=info')
    expect(infoOnly.body.logEntries).toHaveLength(5)
    expect(infoOnly.body.logEntries[0]).toEqual({
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      level: 'info',
      message: 'line 0',
      step: '1',
    })
    expect((await status(templateID, buildID, '?limit=0')).body.logEntries).toEqual([])
    await reporter.ready(buildResult())
    const done = await t.store.getBuild(buildID)
    expect(done).toMatchObject({ status: 'ready', result: buildResult() })
    expect(done?.finishedAt).toBeInstanceOf(Date)
    expect((await t.store.getTag(templateID, 'v1'))?.buildID).toBe(buildID)
    expect((await status(templateID, buildID)).body.status).toBe('ready')
  })

  it('writes the lines logged just before the end', async () => {
    const { templateID, buildID } = await register()
    await t.call('POST', `/v2/templates/${templateID}/builds/${buildID}`, { fromImage: 'debian' })
    const { reporter } = t.builder.build(buildID)
    reporter.log({ level: 'info', message: 'last words', step: 'finalize' })
    await reporter.ready(buildResult())
    const { body } = await status(templateID, buildID)
    expect(body.logEntries.map((entry: { message: string }) => entry.message)).toEqual([
      'last words',
    ])
  })

  it('reports a failure with the failing step’s warnings and errors as reason.logEntries', async () => {
    const { templateID, buildID } = await register()
    await t.call('POST', `/v2/templates/${templateID}/builds/${buildID}`, { fromImage: 'debian' })
    const { reporter } = t.builder.build(buildID)
    await reporter.started()
    reporter.log({ level: 'warn', message: 'earlier warning', step: '1' })
    reporter.log({ level: 'info', message: 'running', step: '2' })
    reporter.log({ level: 'error', message: 'exit code 1', step: '2' })
    await reporter.failed({ message: 'RUN false failed', step: '2' })
    const { body } = await status(templateID, buildID)
    expect(body.status).toBe('error')
    expect(body.reason).toEqual({
      message: 'RUN false failed',
      step: '2',
      logEntries: [expect.objectContaining({ level: 'error', message: 'exit code 1', step: '2' })],
    })
    expect(await t.store.getTag(templateID, 'default')).toBeUndefined()
  })

  it('answers an unknown build with 400, and validates the query', async () => {
    const { templateID } = await register()
    const id = '0b3c7a1e-2f4d-4e5a-9b6c-7d8e9f0a1b2c'
    expect(await status(templateID, id)).toEqual({
      status: 400,
      body: { code: 400, message: `Build '${id}' not found` },
    })
    const { buildID } = await register('other')
    // A build of another template is not this template's.
    expect((await status(templateID, buildID)).status).toBe(400)
    const { buildID: own } = await register()
    expect((await status(templateID, own, '?limit=101')).status).toBe(400)
    expect((await status(templateID, own, '?logsOffset=-1')).status).toBe(400)
    expect((await status(templateID, own, '?level=loud')).status).toBe(400)
  })
})

describe('builds a previous process left unfinished', () => {
  it('fail at start with a reason, and the template’s ready build keeps its tag', async () => {
    const ready = await readyTemplate(t, 'app')
    const waiting = await register('app', { tags: ['next'] })
    const running = await register('app', { tags: ['other'] })
    await t.call('POST', `/v2/templates/${running.templateID}/builds/${running.buildID}`, {
      fromImage: 'debian',
    })
    await t.builder.build(running.buildID).reporter.started()
    expect(await t.templates.builds.failInterrupted()).toBe(2)
    for (const { buildID } of [waiting, running]) {
      expect(await t.store.getBuild(buildID)).toMatchObject({
        status: 'error',
        failure: { message: BUILD_FAILURES.interrupted },
      })
    }
    expect((await t.store.getBuild(ready.buildID))?.status).toBe('ready')
    expect((await t.store.getTag(ready.templateID, 'default'))?.buildID).toBe(ready.buildID)
  })
})

describe('GET .../logs', () => {
  it('pages by time forward from a cursor and backward, by level', async () => {
    const { templateID, buildID } = await register()
    await t.call('POST', `/v2/templates/${templateID}/builds/${buildID}`, { fromImage: 'debian' })
    const { reporter } = t.builder.build(buildID)
    const base = Date.now()
    await t.store.appendBuildLogs(buildID, [
      { timestamp: new Date(base), level: 'info', message: 'a', step: 'base' },
      { timestamp: new Date(base + 10), level: 'debug', message: 'b', step: '1' },
      { timestamp: new Date(base + 20), level: 'error', message: 'c', step: '1' },
    ])
    await reporter.failed({ message: 'x' })
    const logs = async (query: string) => {
      const response = await t.call(
        'GET',
        `/templates/${templateID}/builds/${buildID}/logs${query}`,
      )
      expect(response.status).toBe(200)
      return ((await response.json()).logs as { message: string }[]).map((entry) => entry.message)
    }
    expect(await logs('')).toEqual(['a', 'b', 'c'])
    expect(await logs(`?cursor=${base + 10}`)).toEqual(['b', 'c'])
    expect(await logs(`?cursor=${base + 10}&direction=backward`)).toEqual(['b', 'a'])
    expect(await logs('?level=info&limit=1')).toEqual(['a'])
    expect(await logs('?source=persistent&level=error')).toEqual(['c'])
    const bad = await t.call('GET', `/templates/${templateID}/builds/${buildID}/logs?source=x`)
    expect(bad.status).toBe(400)
  })
})
