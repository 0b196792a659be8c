import { afterEach, beforeEach, describe, expect, it } from 'vitest'
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
  return { status: response.status, body: response.status === 204 ? null : await response.json() }
}

async function otherTeamTemplate(name: string, isPublic: boolean) {
  const other = await t.store.createTeam('Other', `other-${name}`)
  const now = new Date()
  const templateID = `${name}0000000000000000`.slice(0, 20)
  await t.store.insertTemplate({
    templateID,
    teamID: other.id,
    name,
    public: isPublic,
    createdAt: now,
    updatedAt: now,
    lastSpawnedAt: null,
    spawnCount: 0,
    deletedAt: null,
    sourceSandboxID: null,
  })
  return templateID
}

describe('POST /templates/tags', () => {
  it('points new tags at the build the target names, and lists them', async () => {
    const { templateID, buildID } = await readyTemplate(t, 'app', undefined, { tags: ['v1'] })
    expect(
      await json('POST', '/templates/tags', { target: 'app:v1', tags: ['Stable', 'prod'] }),
    ).toEqual({
      status: 201,
      body: { tags: ['stable', 'prod'], buildID },
    })
    const listed = await json('GET', `/templates/${templateID}/tags`)
    expect(listed.status).toBe(200)
    expect(listed.body.map((tag: { tag: string }) => tag.tag).sort()).toEqual([
      'prod',
      'stable',
      'v1',
    ])
    expect(listed.body[0]).toEqual({
      tag: expect.any(String),
      buildID,
      createdAt: expect.any(String),
    })
  })

  it('refuses no tags, a target tag that does not exist, and bad tags', async () => {
    await readyTemplate(t, 'app')
    expect(await json('POST', '/templates/tags', { target: 'app', tags: [] })).toEqual({
      status: 400,
      body: { code: 400, message: 'At least one tag is required' },
    })
    expect(await json('POST', '/templates/tags', { target: 'app:nope', tags: ['x'] })).toEqual({
      status: 404,
      body: { code: 404, message: "Template 'app' with tag 'nope' not found" },
    })
    expect((await json('POST', '/templates/tags', { target: 'app', tags: ['a b'] })).status).toBe(
      400,
    )
    expect((await json('POST', '/templates/tags', { target: 'missing', tags: ['x'] })).status).toBe(
      404,
    )
  })

  it('refuses another team’s template', async () => {
    const theirs = await otherTeamTemplate('theirs', true)
    expect(await json('POST', '/templates/tags', { target: theirs, tags: ['x'] })).toEqual({
      status: 403,
      body: { code: 403, message: 'User does not have access to the template' },
    })
  })
})

describe('DELETE /templates/tags', () => {
  it('removes tags, never default, and takes a name without a tag', async () => {
    const { templateID } = await readyTemplate(t, 'app', undefined, {
      tags: ['default', 'v1', 'v2'],
    })
    expect(await json('DELETE', '/templates/tags', { name: 'app', tags: ['v1'] })).toEqual({
      status: 204,
      body: null,
    })
    expect(await t.store.getTag(templateID, 'v1')).toBeUndefined()
    expect(await t.store.getTag(templateID, 'v2')).toBeDefined()
    expect(await json('DELETE', '/templates/tags', { name: 'app', tags: ['default'] })).toEqual({
      status: 400,
      body: { code: 400, message: "Cannot delete the 'default' tag" },
    })
    expect(await json('DELETE', '/templates/tags', { name: 'app:v2', tags: ['v2'] })).toEqual({
      status: 400,
      body: { code: 400, message: "Name 'app:v2' must not contain a tag" },
    })
    expect(await json('DELETE', '/templates/tags', { name: 'app', tags: [] })).toEqual({
      status: 400,
      body: { code: 400, message: 'At least one tag is required' },
    })
    expect(
      (await json('DELETE', '/templates/tags', { name: 'missing', tags: ['v2'] })).status,
    ).toBe(404)
  })
})

describe('GET /templates/{t}/tags', () => {
  it('answers 404 for an unknown template and 403 for another team’s', async () => {
    expect((await json('GET', '/templates/nosuchtemplate/tags')).status).toBe(404)
    const theirs = await otherTeamTemplate('theirs', false)
    expect((await json('GET', `/templates/${theirs}/tags`)).status).toBe(403)
  })
})

describe('GET /templates/aliases/{alias} (Template.exists)', () => {
  it('answers 200 for the team’s own, by name, namespaced name or name:tag', async () => {
    const { templateID } = await readyTemplate(t, 'app')
    for (const alias of ['app', `${t.team.slug}%2Fapp`, 'app:default', templateID]) {
      expect(await json('GET', `/templates/aliases/${alias}`)).toEqual({
        status: 200,
        body: { templateID, public: false },
      })
    }
  })

  it('answers 403 for another team’s template and 404 for none', async () => {
    const theirs = await otherTeamTemplate('theirs', true)
    expect((await json('GET', `/templates/aliases/${theirs}`)).status).toBe(403)
    expect(await json('GET', '/templates/aliases/nothing')).toEqual({
      status: 404,
      body: { code: 404, message: "Template alias 'nothing' not found" },
    })
    expect((await json('GET', '/templates/aliases/Bad%20Name')).status).toBe(400)
  })
})
