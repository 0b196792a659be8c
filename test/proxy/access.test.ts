import { once } from 'node:events'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { rawPost, rawRequest } from '../support/raw-http.js'
import { DOMAIN, json, type MapDirectory, send } from './proxy-fixture.js'
import { ADDRESS_A, ADDRESS_ENVD, startWorld } from './upstreams.js'

// Who may reach a sandbox: traffic tokens, envd's control routes, which credentials travel on,
// and auto-resume of paused sandboxes (wire contract §4.4, §4.6).
let world: Awaited<ReturnType<typeof startWorld>> | undefined
let directory: MapDirectory
let proxyPort = 0
let portA = 0

beforeAll(async () => {
  world = await startWorld()
  ;({ proxyPort, portA, directory } = world)
})

afterAll(async () => {
  await world?.stop()
})

beforeEach(() => {
  world?.reset()
})

/** `isbxp`: a private sandbox on the same server as `isbxa`, whose traffic token is `secret-token`. */
function addPrivateSandbox(): void {
  directory.sandboxes.set('isbxp', {
    sandboxID: 'isbxp',
    address: ADDRESS_A,
    state: 'running',
    autoResume: false,
    trafficAccessToken: 'secret-token',
  })
}

describe('traffic access token', () => {
  beforeEach(addPrivateSandbox)

  it('answers 403 without the token or with a wrong one, and passes with it', async () => {
    const host = `${portA}-isbxp.${DOMAIN}`
    const missing = await send(proxyPort, { host })
    expect(missing.status).toBe(403)
    expect(json(missing)).toEqual({
      sandboxId: 'isbxp',
      message:
        "Sandbox is secured with traffic access token. Token header 'e2b-traffic-access-token' is missing",
      code: 403,
    })
    const wrong = await send(proxyPort, { host, headers: { 'e2b-traffic-access-token': 'nope' } })
    expect(wrong.status).toBe(403)
    expect(json(wrong)).toMatchObject({
      message:
        "Sandbox is secured with traffic access token. Provided token in header 'e2b-traffic-access-token' is invalid",
    })
    const right = await send(proxyPort, {
      host,
      headers: { 'e2b-traffic-access-token': 'secret-token' },
    })
    expect(right.status).toBe(200)
  })

  it('leaves the envd port to envd and its own X-Access-Token', async () => {
    const answer = await send(proxyPort, { host: `49983-isbxp.${DOMAIN}`, path: '/health' })
    expect(answer.status).not.toBe(403)
  })
})

describe('envd control routes', () => {
  const envdHost = `49983-isbxe.${DOMAIN}`

  it.each([
    '/init',
    '/freeze',
    '/unfreeze',
    '/fsfreeze',
    '/fsthaw',
    '/collapse',
    '/upgrade',
    '/init/?a=1',
    '/INIT',
  ])('refuses %s on the envd port', async (target) => {
    const answer = await send(proxyPort, { host: envdHost, method: 'POST', path: target })
    expect(answer.status).toBe(404)
    expect(json(answer)).toEqual({
      message:
        'This endpoint is reserved for the E2B control plane and is not reachable through the sandbox URL',
      path: target.split('?')[0],
      code: 404,
    })
  })

  // Every spelling envd's URL parsing would route to /init (dot segments, their percent-encoded
  // forms, `\` read as `/`, `//authority/...`, absolute-form), and the forms that are merely
  // not canonical: the proxy refuses them all on envd's port rather than guess envd's reading.
  const spellings = [
    '/./init',
    '/%2e/init',
    '/%2E%2e/init',
    '/x/../init',
    '/files/../init',
    '/x/%2e%2e/init',
    '/x/.%2E/init',
    '//x/init',
    '/\\x\\init',
    'http://localhost/init',
    `HTTP://${envdHost}/init`,
    '/%69nit',
    '/init#x',
    '/init;x',
    '/health//',
    '*',
  ]

  it('answers every non-canonical spelling 400, so none reaches envd', async () => {
    const answers = []
    for (const target of spellings) {
      const body = JSON.stringify({ envVars: { INJECTED: target } })
      answers.push(await rawRequest(proxyPort, rawPost(target, { Host: envdHost }, body)))
      const upgrade = { Host: envdHost, Connection: 'Upgrade', Upgrade: 'websocket' }
      answers.push(await rawRequest(proxyPort, rawPost(target, upgrade, body)))
    }
    const refusal = { status: 400, body: 'Invalid request path\n' }
    expect(answers).toEqual(answers.map(() => refusal))
    const envs = await fetch(`http://${ADDRESS_ENVD}:49983/envs`)
    expect(await envs.json()).not.toHaveProperty('INJECTED')
  })

  it('forwards canonical envd paths with their query as sent', async () => {
    expect((await send(proxyPort, { host: envdHost, path: '/health' })).status).toBe(204)
    const envs = await send(proxyPort, { host: envdHost, path: "/envs?path=it's%20here" })
    expect(envs.status).toBe(200)
    expect(json(envs)).toMatchObject({ E2B_SANDBOX: 'true' })
  })

  it('lets /init through on other ports', async () => {
    const answer = await send(proxyPort, { host: `${portA}-isbxa.${DOMAIN}`, path: '/init' })
    expect(json(answer)).toMatchObject({ server: 'a', path: '/init' })
  })
})

describe('Sandbar credentials', () => {
  const credentials = {
    'x-api-key': 'e2b_team_key',
    'x-access-token': 'envd-token',
    'e2b-traffic-access-token': 'secret-token',
  }
  const own = { authorization: 'Bearer app-token', 'x-app': 'kept' }

  it('never reach a user port, over HTTP or a WebSocket upgrade', async () => {
    addPrivateSandbox()
    const headers = { ...credentials, ...own }
    for (const sandboxID of ['isbxa', 'isbxp']) {
      const host = `${portA}-${sandboxID}.${DOMAIN}`
      const answer = await send(proxyPort, { host, path: '/headers', headers })
      expect(answer.status).toBe(200)
      const seen = json(answer)
      expect(seen).toMatchObject(own)
      for (const name of Object.keys(credentials)) expect(seen).not.toHaveProperty(name)
    }
    const socket = new WebSocket(`ws://127.0.0.1:${proxyPort}/headers`, {
      headers: { ...headers, host: `${portA}-isbxp.${DOMAIN}` },
    })
    try {
      const [message] = await once(socket, 'message')
      const seen = JSON.parse(String(message))
      expect(seen).toMatchObject(own)
      for (const name of Object.keys(credentials)) expect(seen).not.toHaveProperty(name)
    } finally {
      socket.terminate()
    }
  })

  it("give envd's port its X-Access-Token and nothing else of Sandbar's", async () => {
    const headers = { ...credentials, ...own }
    const answer = await send(proxyPort, {
      host: `49983-isbxh.${DOMAIN}`,
      path: '/headers',
      headers,
    })
    const seen = json(answer)
    expect(seen).toMatchObject({ ...own, 'x-access-token': 'envd-token' })
    expect(seen).not.toHaveProperty('x-api-key')
    expect(seen).not.toHaveProperty('e2b-traffic-access-token')
  })
})

describe('auto-resume', () => {
  it('resumes a paused sandbox once for concurrent requests, then forwards them', async () => {
    directory.sandboxes.set('isbxz', {
      sandboxID: 'isbxz',
      address: ADDRESS_A,
      state: 'paused',
      autoResume: true,
    })
    const host = `${portA}-isbxz.${DOMAIN}`
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => send(proxyPort, { host, path: '/who' })),
    )
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200])
    expect(directory.resumeCalls).toBe(1)
    expect(directory.sandboxes.get('isbxz')?.state).toBe('running')
  })

  it('answers a paused sandbox without auto-resume as not found', async () => {
    directory.sandboxes.set('isbxs', {
      sandboxID: 'isbxs',
      address: ADDRESS_A,
      state: 'paused',
      autoResume: false,
    })
    const answer = await send(proxyPort, { host: `${portA}-isbxs.${DOMAIN}` })
    expect(answer.status).toBe(502)
    expect(json(answer)).toEqual({
      sandboxId: 'isbxs',
      message: 'The sandbox was not found',
      code: 502,
    })
    expect(directory.resumeCalls).toBe(0)
  })

  it('needs the traffic token of a private sandbox and the access token of a secure one', async () => {
    directory.sandboxes.set('isbxg', {
      sandboxID: 'isbxg',
      address: ADDRESS_A,
      state: 'paused',
      autoResume: true,
      trafficAccessToken: 'traffic',
      envdAccessToken: 'envd',
    })
    const denied = {
      sandboxId: 'isbxg',
      message:
        "This sandbox can't be resumed with the credentials provided. Check your access token and try again.",
      code: 403,
    }
    const app = `${portA}-isbxg.${DOMAIN}`
    const noToken = await send(proxyPort, { host: app })
    expect([noToken.status, json(noToken)]).toEqual([403, denied])
    const envd = await send(proxyPort, {
      host: `49983-isbxg.${DOMAIN}`,
      headers: { 'x-access-token': 'traffic' },
    })
    expect([envd.status, json(envd)]).toEqual([403, denied])
    expect(directory.resumeCalls).toBe(0)
    const allowed = await send(proxyPort, {
      host: app,
      headers: { 'e2b-traffic-access-token': 'traffic' },
    })
    expect(allowed.status).toBe(200)
    expect(directory.resumeCalls).toBe(1)
  })
})
