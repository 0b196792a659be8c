import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientEnvVariables } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

const run = promisify(execFile)

let serve: ServeInstance

beforeAll(async () => {
  serve = await startServe()
})

afterAll(async () => {
  expect(await serve?.stop()).toEqual([])
})

/** The official `e2b` CLI (package @e2b/cli), configured by client.env alone, as users do. */
async function e2b(...args: string[]): Promise<string> {
  const { stdout } = await run('node_modules/.bin/e2b', args, {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...clientEnvVariables(serve.clientEnvText),
    },
    timeout: 60_000,
  })
  return stdout
}

describe('the e2b CLI against sandbar serve', () => {
  it('lists a sandbox with its metadata, then kills it', async () => {
    const sandbox = await Sandbox.create({ ...serve.client, metadata: { purpose: 'sbt-cli' } })
    const listed = await e2b('sandbox', 'list')
    const row = listed.split('\n').find((line) => line.startsWith(sandbox.sandboxId))
    expect(row).toMatch(/\bbase\b.*\bRunning\b.*\{"purpose":"sbt-cli"\}/)

    expect(await e2b('sandbox', 'kill', sandbox.sandboxId)).toContain(
      `Sandbox ${sandbox.sandboxId} has been killed`,
    )
    expect(await Sandbox.kill(sandbox.sandboxId, serve.client)).toBe(false)
    expect(await e2b('sandbox', 'list')).not.toContain(sandbox.sandboxId)
  })
})
