import { Writable } from 'node:stream'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { StoreBuildReporter } from '../../../../src/api/build-reporter.js'
import { buildResult, type Json, type TemplateApp, templateApp } from './template-app.js'

let t: TemplateApp
beforeEach(async () => {
  t = await templateApp()
})
afterEach(async () => {
  await t.close()
})

/** A pino logger whose records the test reads back. */
function capturingLogger() {
  const records: Json[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      records.push(JSON.parse(String(chunk)))
      done()
    },
  })
  return { records, logger: pino({ level: 'debug' }, stream) }
}

describe('StoreBuildReporter', () => {
  it('logs progress with the build’s IDs, each step’s duration, and the whole build’s', async () => {
    const registered = await (await t.call('POST', '/v3/templates', { name: 'app' })).json()
    const build = await t.store.getBuild(registered.buildID)
    if (build === undefined) throw new Error('no build')
    const { records, logger } = capturingLogger()
    const reporter = new StoreBuildReporter(t.store, build, logger)
    await reporter.started()
    reporter.log({ level: 'info', message: 'pulling', step: 'base' })
    await new Promise((resolve) => setTimeout(resolve, 20))
    reporter.log({ level: 'info', message: 'RUN make', step: '1' })
    await reporter.ready(buildResult())
    await new Promise((resolve) => setImmediate(resolve))
    const ids = { templateID: registered.templateID, buildID: registered.buildID }
    const base = records.find((r) => r.msg === 'build step finished' && r.step === 'base')
    expect(base).toMatchObject({ ...ids, durationMs: expect.any(Number) })
    expect(base.durationMs).toBeGreaterThanOrEqual(15)
    expect(records.find((r) => r.msg === 'build step finished' && r.step === '1')).toMatchObject(
      ids,
    )
    expect(records.find((r) => r.msg === 'build ready')).toMatchObject({
      ...ids,
      durationMs: expect.any(Number),
      tags: ['default'],
    })
    expect(await reporter.outcome).toEqual({ status: 'ready' })
  })

  it('leaves a build cancelled meanwhile failed, without tags', async () => {
    const registered = await (await t.call('POST', '/v3/templates', { name: 'app' })).json()
    const build = await t.store.getBuild(registered.buildID)
    if (build === undefined) throw new Error('no build')
    const reporter = new StoreBuildReporter(t.store, build, pino({ level: 'silent' }))
    await reporter.started()
    expect((await t.call('DELETE', `/templates/${registered.templateID}`)).status).toBe(204)
    await reporter.ready(buildResult())
    expect((await t.store.getBuild(registered.buildID))?.status).toBe('error')
    expect(await t.store.listTags(registered.templateID)).toEqual([])
  })
})
