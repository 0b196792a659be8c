import type http from 'node:http'
import type { AddressInfo } from 'node:net'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ENVD_CONTROL_HEADER } from '../../../../src/envd/index.js'
import { createEnvdServer } from '../../../../src/envd/server.js'
import { EnvdState } from '../../../../src/envd/state.js'
import { UserDirectory } from '../../../../src/envd/users.js'
import { rawRequest } from '../../../support/raw-http.js'
import { testRunAs } from '../../../support/run-as.js'

const SECRET = 'sbt-control-secret-0123456789abcdef0123456789'
const TOKEN = 'sbt-token'

let server: http.Server
let state: EnvdState
let url: string

/** envd's whole server, as the agent starts it in a sandbox: locked by its handover. */
async function serve(handover?: { controlSecret: string; accessToken?: string }): Promise<void> {
  state = new EnvdState({ E2B_SANDBOX: 'true' }, handover)
  server = createEnvdServer({
    state,
    users: new UserDirectory(),
    logger: pino({ level: 'silent' }),
    runAs: await testRunAs(),
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

beforeEach(() => serve({ controlSecret: SECRET, accessToken: TOKEN }))
afterEach(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

function init(body: object, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
}

const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString()

describe('POST /init on a sandbox envd', () => {
  it('is locked before any /init: gated routes want the handed-over token', async () => {
    expect((await fetch(`${url}/envs`)).status).toBe(401)
    const envs = await fetch(`${url}/envs`, { headers: { 'X-Access-Token': TOKEN } })
    expect(await envs.json()).toEqual({ E2B_SANDBOX: 'true' })
  })

  it('refuses a push without the control secret, even one carrying the access token', async () => {
    const missing = await init(
      { envVars: { SBT_ROGUE: '1' }, timestamp: inSeconds(0) },
      { 'X-Access-Token': TOKEN },
    )
    expect(missing.status).toBe(401)
    expect(await missing.json()).toEqual({
      code: 401,
      message: '/init is reserved for the sandbox agent: control secret missing or wrong',
    })
    const wrong = await init(
      { accessToken: 'rogue', envVars: { SBT_ROGUE: '1' } },
      { [ENVD_CONTROL_HEADER]: `${SECRET}x` },
    )
    expect(wrong.status).toBe(401)
    expect(state.isAccessToken(TOKEN)).toBe(true)
    expect(state.envVars).toEqual({})
  })

  it('applies a push carrying the control secret', async () => {
    const response = await init(
      { envVars: { A: '1' }, defaultUser: 'root', timestamp: inSeconds(0) },
      { [ENVD_CONTROL_HEADER]: SECRET },
    )
    expect(response.status).toBe(204)
    expect(state.envVars).toEqual({ A: '1' })
  })

  it('refuses a timestamp more than a second ahead of its clock, and changes nothing', async () => {
    const future = inSeconds(60)
    const response = await init(
      { envVars: { FUTURE: '1' }, timestamp: future },
      { [ENVD_CONTROL_HEADER]: SECRET },
    )
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({
      code: 400,
      message: `init timestamp ${future} is ahead of envd's clock by more than 1000 ms`,
    })
    expect(state.envVars).toEqual({})
    // A push stamped now still applies: the refused one left no mark.
    const now = await init(
      { envVars: { NOW: '1' }, timestamp: inSeconds(0) },
      { [ENVD_CONTROL_HEADER]: SECRET },
    )
    expect(now.status).toBe(204)
    expect(state.envVars).toEqual({ NOW: '1' })
  })
})

describe('POST /init on a debug envd (`sandbar envd`, no handover)', () => {
  beforeEach(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await serve()
  })

  it('stays open as E2B envd outside Firecracker, but refuses a future timestamp', async () => {
    const future = await init({ envVars: { FUTURE: '1' }, timestamp: inSeconds(60) })
    expect(future.status).toBe(400)
    expect((await init({ accessToken: TOKEN, timestamp: inSeconds(0) })).status).toBe(204)
    expect(state.isAccessToken(TOKEN)).toBe(true)
  })
})

describe('a request target envd cannot parse', () => {
  it('answers 400 and envd keeps serving', async () => {
    const port = (server.address() as AddressInfo).port
    for (const target of ['//', '//:x/health']) {
      const answer = await rawRequest(
        port,
        `GET ${target} HTTP/1.1\r\nHost: envd\r\nConnection: close\r\n\r\n`,
      )
      expect(answer.status).toBe(400)
      expect(JSON.parse(answer.body)).toEqual({
        code: 400,
        message: `invalid request target ${target}`,
      })
    }
    expect((await fetch(`${url}/health`)).status).toBe(204)
  })
})
