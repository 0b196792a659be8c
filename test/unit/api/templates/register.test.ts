import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BUILD_FAILURES } from '../../../../src/api/template-builds.js'
import { readyTemplate, type TemplateApp, templateApp } from './template-app.js'

let t: TemplateApp
beforeEach(async () => {
  t = await templateApp()
})
afterEach(async () => {
  await t.close()
})

async function refusal(response: Response, status: number, message: string) {
  expect(await response.json()).toEqual({ code: status, message })
  expect(response.status).toBe(status)
}

describe('POST /v3/templates', () => {
  it('registers a waiting build of a new template, names lower-cased, tags from the name first', async () => {
    const response = await t.call('POST', '/v3/templates', {
      name: ' My-App:V1 ',
      tags: ['beta', 'v1'],
    })
    expect(response.status).toBe(202)
    const body = await response.json()
    expect(body).toEqual({
      templateID: expect.stringMatching(/^[a-z0-9]{20}$/),
      buildID: expect.stringMatching(/^[0-9a-f-]{36}$/),
      public: false,
      names: [`${t.team.slug}/my-app`],
      aliases: ['my-app'],
      tags: ['v1', 'beta'],
    })
    const build = await t.store.getBuild(body.buildID)
    expect(build).toMatchObject({ status: 'waiting', cpuCount: 2, memoryMB: 1024, diskSizeMB: 512 })
  })

  it('gives a build without tags the tag default, and takes the deprecated alias as the name', async () => {
    const response = await t.call('POST', '/v3/templates', { alias: 'old-style' })
    expect(await response.json()).toMatchObject({ aliases: ['old-style'], tags: ['default'] })
  })

  it('registers a new build of the same template under the same name', async () => {
    const first = await (await t.call('POST', '/v3/templates', { name: 'app' })).json()
    const second = await (
      await t.call('POST', '/v3/templates', { name: `${t.team.slug}/app` })
    ).json()
    expect(second.templateID).toBe(first.templateID)
    expect(second.buildID).not.toBe(first.buildID)
  })

  it('fails an older waiting build for the same tags as superseded, and leaves others', async () => {
    const first = await (
      await t.call('POST', '/v3/templates', { name: 'app', tags: ['a', 'x'] })
    ).json()
    const other = await (await t.call('POST', '/v3/templates', { name: 'app', tags: ['b'] })).json()
    await t.call('POST', '/v3/templates', { name: 'app', tags: ['a', 'c'] })
    expect(await t.store.getBuild(first.buildID)).toMatchObject({
      status: 'error',
      failure: { message: BUILD_FAILURES.superseded },
    })
    expect((await t.store.getBuild(other.buildID))?.status).toBe('waiting')
  })

  it('refuses a missing name', async () => {
    await refusal(await t.call('POST', '/v3/templates', {}), 400, 'Name is required')
  })

  it('refuses names over 128 characters, bad names, bad tags and another namespace', async () => {
    const long = await t.call('POST', '/v3/templates', { name: 'a'.repeat(129) })
    expect(long.status).toBe(400)
    expect((await long.json()).message).toMatch(/^validation error: /)
    await refusal(
      await t.call('POST', '/v3/templates', { name: 'my app' }),
      400,
      "Invalid template name: name 'my app' may contain only a-z, 0-9, '-' and '_'",
    )
    await refusal(
      await t.call('POST', '/v3/templates', { name: 'app', tags: ['no/slash'] }),
      400,
      "Invalid tag: tag 'no/slash' may contain only a-z, 0-9, '-', '_' and '.'",
    )
    await refusal(
      await t.call('POST', '/v3/templates', {
        name: 'app',
        tags: ['0b3c7a1e-2f4d-4e5a-9b6c-7d8e9f0a1b2c'],
      }),
      400,
      "Invalid tag: tag '0b3c7a1e-2f4d-4e5a-9b6c-7d8e9f0a1b2c' must not be a UUID",
    )
    await refusal(
      await t.call('POST', '/v3/templates', { name: 'someone-else/app' }),
      400,
      `Template namespace 'someone-else' must be your team's slug '${t.team.slug}'`,
    )
  })

  it.each([
    [{ cpuCount: 0 }, 'CPU count must be at least 1'],
    [{ cpuCount: 3 }, 'CPU count must be 1 or an even number'],
    [{ cpuCount: 10 }, 'CPU count must be at most 8'],
    [{ memoryMB: 64 }, 'Memory must be at least 128 MiB'],
    [{ memoryMB: 1025 }, 'Memory must be an even number of MiB'],
    [{ memoryMB: 8194 }, 'Memory must be at most 8192 MiB'],
  ])('refuses sizes %o', async (sizes, message) => {
    await refusal(await t.call('POST', '/v3/templates', { name: 'app', ...sizes }), 400, message)
  })

  it('takes CPU 1 and the maxima', async () => {
    const response = await t.call('POST', '/v3/templates', {
      name: 'app',
      cpuCount: 1,
      memoryMB: 8192,
    })
    const { buildID } = await response.json()
    expect(await t.store.getBuild(buildID)).toMatchObject({ cpuCount: 1, memoryMB: 8192 })
  })

  it('answers 429 when the team has as many active builds as the limit', async () => {
    t.builder.extraActive = 20
    const response = await t.call('POST', '/v3/templates', { name: 'app' })
    expect(response.status).toBe(429)
    expect((await response.json()).message).toMatch(
      /maximum number of concurrent template builds \(20\)/,
    )
  })

  it('answers 404 for a build of a deleted template named by its ID', async () => {
    const { templateID } = await readyTemplate(t, 'app')
    expect((await t.call('DELETE', `/templates/${templateID}`)).status).toBe(204)
    await refusal(
      await t.call('POST', '/v3/templates', { name: templateID }),
      404,
      `Template '${templateID}' has been deleted and cannot be rebuilt`,
    )
  })

  it('needs the API key', async () => {
    const response = await t.app.request('/v3/templates', { method: 'POST', body: '{}' })
    expect(response.status).toBe(401)
  })
})

describe('POST /v2/templates (deprecated)', () => {
  it('registers a build and answers TemplateLegacy', async () => {
    const response = await t.call('POST', '/v2/templates', {
      alias: 'legacy',
      cpuCount: 4,
      memoryMB: 2048,
    })
    expect(response.status).toBe(202)
    const body = await response.json()
    expect(body).toMatchObject({
      templateID: expect.any(String),
      buildID: expect.any(String),
      cpuCount: 4,
      memoryMB: 2048,
      diskSizeMB: 512,
      public: false,
      aliases: ['legacy'],
      createdBy: null,
      lastSpawnedAt: null,
      spawnCount: 0,
      buildCount: 1,
    })
    expect(body.names).toBeUndefined()
  })

  it('answers the new build’s sizes for a template that has a ready build', async () => {
    await readyTemplate(t, 'legacy', undefined, { cpuCount: 1, memoryMB: 512 })
    const response = await t.call('POST', '/v2/templates', { alias: 'legacy', cpuCount: 4 })
    expect(await response.json()).toMatchObject({ cpuCount: 4, memoryMB: 1024, buildCount: 2 })
  })

  it('requires the alias', async () => {
    const response = await t.call('POST', '/v2/templates', {})
    expect(response.status).toBe(400)
    expect((await response.json()).message).toMatch(/^validation error: /)
  })
})
