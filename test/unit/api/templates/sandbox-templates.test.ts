import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { BASE_TEMPLATE, type SystemTemplate } from '../../../../src/api/index.js'
import { buildResult, readyTemplate, type TemplateApp, templateApp } from './template-app.js'

let t: TemplateApp
beforeEach(async () => {
  t = await templateApp()
})
afterEach(async () => {
  await t.close()
})

async function create(
  templateID: string,
  body: Record<string, unknown> = {},
  route = '/sandboxes',
) {
  const response = await t.call('POST', route, { templateID, ...body })
  return { status: response.status, body: await response.json() }
}

async function insertOtherTeamTemplate(isPublic: boolean) {
  const other = await t.store.createTeam('Other', `other-${isPublic}`)
  const now = new Date()
  const templateID = isPublic ? 'theirpublic000000000' : 'theirprivate00000000'
  await t.store.insertTemplate({
    templateID,
    teamID: other.id,
    name: 'theirs',
    public: isPublic,
    createdAt: now,
    updatedAt: now,
    lastSpawnedAt: null,
    spawnCount: 0,
    deletedAt: null,
    sourceSandboxID: null,
  })
  const buildID = crypto.randomUUID()
  await t.store.insertBuild({
    buildID,
    templateID,
    status: 'ready',
    createdAt: now,
    updatedAt: now,
    finishedAt: now,
    cpuCount: 1,
    memoryMB: 256,
    diskSizeMB: 512,
    envdVersion: null,
    tags: ['default'],
    result: buildResult({ layers: ['theirs'] }),
    failure: null,
  })
  await t.store.assignTags(templateID, ['default'], buildID)
  return templateID
}

describe('POST /sandboxes from a template', () => {
  it('starts the build’s layers with its sizes, defaults and env, the request’s env on top', async () => {
    const result = buildResult({
      defaultUser: 'app',
      defaultWorkdir: '/srv',
      startCmd: 'node server.js',
      readyCmd: 'curl -s localhost:3000',
    })
    const { templateID } = await readyTemplate(t, 'web', result, { cpuCount: 4, memoryMB: 2048 })
    const { status, body } = await create('web', { envVars: { SHARED: 'request' } })
    expect(status).toBe(201)
    expect(body).toMatchObject({ templateID, alias: 'web' })
    expect(t.created).toHaveLength(1)
    expect(t.created[0]).toMatchObject({
      template: {
        templateID,
        layers: ['layer-a', 'layer-b'],
        defaultUser: 'app',
        defaultWorkdir: '/srv',
        startCmd: 'node server.js',
        readyCmd: 'curl -s localhost:3000',
      },
      cpuCount: 4,
      memoryMB: 2048,
      diskSizeMB: 512,
      envVars: { FROM_TEMPLATE: 'yes', SHARED: 'request' },
    })
    const detail = await t.call('GET', `/sandboxes/${body.sandboxID}`)
    expect(await detail.json()).toMatchObject({
      templateID,
      alias: 'web',
      cpuCount: 4,
      memoryMB: 2048,
    })
    await vi.waitFor(async () => {
      expect((await t.store.getTemplate(templateID))?.spawnCount).toBe(1)
    })
  })

  it('resolves name:tag and team-slug/name:tag to the tag’s build, on v1 and v2 create', async () => {
    await readyTemplate(t, 'web', buildResult({ layers: ['old'] }))
    await readyTemplate(t, 'web', buildResult({ layers: ['new'] }), { tags: ['next'] })
    await create('web:next')
    await create(`${t.team.slug}/web:next`, {}, '/v2/sandboxes')
    await create('WEB')
    expect(t.created.map((request) => request.template.layers)).toEqual([['new'], ['new'], ['old']])
  })

  it('reaches another team’s public template by ID, and not its private one', async () => {
    const publicID = await insertOtherTeamTemplate(true)
    expect((await create(publicID)).status).toBe(201)
    expect(t.created[0]?.memoryMB).toBe(256)
    const privateID = await insertOtherTeamTemplate(false)
    expect(await create(privateID)).toEqual({
      status: 403,
      body: { code: 403, message: `you don't have access to template '${privateID}'` },
    })
  })

  it("resolves another team's namespace: its public template by name, not its private one", async () => {
    await insertOtherTeamTemplate(true)
    expect((await create('other-true/theirs:default')).status).toBe(201)
    expect(t.created[0]?.template.layers).toEqual(['theirs'])
    await insertOtherTeamTemplate(false)
    expect(await create('other-false/theirs')).toEqual({
      status: 403,
      body: { code: 403, message: "you don't have access to template 'other-false/theirs'" },
    })
    expect((await create('no-such-team/theirs')).status).toBe(404)
  })

  it('answers the contract’s errors for unknown templates and tags and bad references', async () => {
    await readyTemplate(t, 'web')
    expect(await create('nope')).toEqual({
      status: 404,
      body: { code: 404, message: "template 'nope' not found" },
    })
    expect(await create('web:v9')).toEqual({
      status: 404,
      body: { code: 404, message: "tag 'v9' does not exist for template 'web'" },
    })
    expect(await create('other-team/web')).toEqual({
      status: 404,
      body: { code: 404, message: "template 'other-team/web' not found" },
    })
    const bad = await create('we b')
    expect(bad.status).toBe(400)
    expect(bad.body.message).toMatch(/^Invalid template reference: /)
    // A template whose only build is still waiting has no tag to start from.
    await t.call('POST', '/v3/templates', { name: 'pending' })
    expect((await create('pending')).status).toBe(404)
    expect(t.created).toHaveLength(0)
  })
})

describe('ensureSystemTemplate', () => {
  it('creates base, builds it from e2bdev/base, and resolves once it is ready', async () => {
    const ensured = t.templates.ensureSystemTemplate(BASE_TEMPLATE)
    await vi.waitFor(() => expect(t.builder.submitted).toHaveLength(1))
    const [submitted] = t.builder.submitted
    expect(submitted?.request).toMatchObject({
      templateID: 'base',
      base: { kind: 'image', image: 'e2bdev/base' },
      steps: [],
      cpuCount: 2,
      memoryMB: 512,
    })
    await t.builder.succeed(submitted?.request.buildID ?? '', buildResult({ layers: ['base'] }))
    await ensured
    expect(await t.store.getTemplate('base')).toMatchObject({
      name: 'base',
      public: true,
      teamID: t.team.id,
    })
    const { status, body } = await create('base')
    expect(status).toBe(201)
    expect(body).toMatchObject({ templateID: 'base', alias: 'base' })
    expect(t.created[0]).toMatchObject({ cpuCount: 2, memoryMB: 512 })
    // Ready already: nothing is built again.
    await t.templates.ensureSystemTemplate(BASE_TEMPLATE)
    expect(t.builder.submitted).toHaveLength(1)
  })

  it('builds a template on another again only when its definition changes', async () => {
    const base = t.templates.ensureSystemTemplate(BASE_TEMPLATE)
    await vi.waitFor(() => expect(t.builder.submitted).toHaveLength(1))
    await t.builder.succeed(t.builder.submitted[0]?.request.buildID ?? '', buildResult())
    await base
    const tools: SystemTemplate = {
      templateID: 'tools',
      sizes: { cpuCount: 2, memoryMB: 1024, diskSizeMB: 1024 },
      from: { template: 'base' },
      steps: [{ type: 'RUN', args: ['apt-get install -y jq', 'root'], force: false }],
      startCmd: 'serve-tools',
      readyCmd: 'true',
    }
    const ensure = async (definition: SystemTemplate, builds: number) => {
      const ensured = t.templates.ensureSystemTemplate(definition)
      await vi.waitFor(() => expect(t.builder.submitted).toHaveLength(builds))
      const request = t.builder.submitted[builds - 1]?.request
      await t.builder.succeed(request?.buildID ?? '', buildResult())
      await ensured
      return request
    }
    expect(await ensure(tools, 2)).toMatchObject({
      templateID: 'tools',
      base: { kind: 'template', name: 'base' },
      steps: tools.steps,
      startCmd: 'serve-tools',
      readyCmd: 'true',
    })
    expect((await create('tools')).status).toBe(201)
    await t.templates.ensureSystemTemplate(tools)
    expect(t.builder.submitted).toHaveLength(2)
    expect(await ensure({ ...tools, readyCmd: 'test -e /ready' }, 3)).toMatchObject({
      readyCmd: 'test -e /ready',
    })
  })

  it('rejects with the build’s reason when it fails', async () => {
    const ensured = t.templates.ensureSystemTemplate(BASE_TEMPLATE)
    await vi.waitFor(() => expect(t.builder.submitted).toHaveLength(1))
    const [submitted] = t.builder.submitted
    await submitted?.reporter.failed({ message: 'no mmdebstrap', step: 'base' })
    await expect(ensured).rejects.toThrow('building the base template failed: no mmdebstrap')
  })
})
