import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmod, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { Sandbox, Template } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEMPLATE_CACHE } from '../agent/agent-fixture.js'
import { callApi } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// Layers no template needs any more are removed (issue 11, "Garbage"). This service has a
// layer store of its own, seeded with hard links to the cached Debian base, so what it
// removes is only ever its own.

let serve: ServeInstance
let templatesDir = ''
const opts = () => ({ ...serve.client, cpuCount: 1, memoryMB: 512 })
const layersDir = () => path.join(templatesDir, 'layers')
const layers = async () => new Set(await readdir(layersDir()))
/** Which of `wanted` the layer store still holds. */
const stillThere = async (wanted: string[]) => {
  const present = await layers()
  return wanted.filter((layer) => present.has(layer))
}

beforeAll(async () => {
  templatesDir = await mkdtemp('/tmp/sbt-templates-')
  await mkdir(layersDir())
  await chmod(layersDir(), 0o700)
  const cache = path.join(TEMPLATE_CACHE, 'layers')
  for (const name of (await readdir(cache)).filter((layer) => layer.startsWith('base-'))) {
    await promisify(execFile)('cp', ['-al', path.join(cache, name), layersDir()])
  }
  serve = await startServe([], { templatesDir })
})

afterAll(async () => {
  const leaks = await serve?.stop()
  await rm(templatesDir, { recursive: true, force: true })
  expect(leaks).toEqual([])
})

/** Builds a one-step template whose layer is new; the layers it added to the store. */
async function buildNew(name: string): Promise<string[]> {
  const before = await layers()
  await Template.build(
    Template()
      .fromBaseImage()
      .runCmd(`echo ${randomBytes(6).toString('hex')} > /tmp/unique`),
    name,
    opts(),
  )
  return [...(await layers())].filter((layer) => !before.has(layer))
}

describe('unused layers', () => {
  it("go with their template once no sandbox uses it; base's stay", async () => {
    const name = `sbt-gc-${randomBytes(3).toString('hex')}`
    const added = await buildNew(name)
    expect(added.length).toBeGreaterThan(0)
    const sandbox = await Sandbox.create(name, opts())
    const { templateID } = (await callApi(serve.client, 'GET', `/templates/aliases/${name}`)).body
    const refused = await callApi(serve.client, 'DELETE', `/templates/${templateID}`)
    expect(refused.status).toBe(400)
    await sandbox.kill()
    expect((await callApi(serve.client, 'DELETE', `/templates/${templateID}`)).status).toBe(204)
    await expect.poll(() => stillThere(added), { timeout: 10_000 }).toEqual([])
    const base = await Sandbox.create(opts())
    expect((await base.commands.run('whoami')).stdout).toBe('user\n')
    await base.kill()
  })

  it('of a build whose tag moved to a newer build go; the newer build stays', async () => {
    const name = `sbt-gc-${randomBytes(3).toString('hex')}`
    const first = await buildNew(`${name}:v1`)
    const second = await buildNew(`${name}:v1`)
    await expect.poll(() => stillThere(first), { timeout: 10_000 }).toEqual([])
    const present = await layers()
    expect(second.every((layer) => present.has(layer))).toBe(true)
    const sandbox = await Sandbox.create(`${name}:v1`, opts())
    expect((await sandbox.commands.run('test -s /tmp/unique && echo ok')).stdout).toBe('ok\n')
    await sandbox.kill()
  })
})
