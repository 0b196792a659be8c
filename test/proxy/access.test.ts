import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DOMAIN, json, type MapDirectory, send } from './proxy-fixture.js'
import { ADDRESS_A, startWorld } from './upstreams.js'

// Who may reach a sandbox: traffic tokens, envd's control routes, and auto-resume of paused
// sandboxes (wire contract §4.4, §4.6).
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

describe('traffic access token', () => {
  beforeEach(() => {
    directory.sandboxes.set('isbxp', {
      sandboxID: 'isbxp',
      address: ADDRESS_A,
      state: 'running',
      autoResume: false,
      trafficAccessToken: 'secret-token',
    })
  })

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
  it.each([
    '/init',
    '/freeze',
    '/unfreeze',
    '/fsfreeze',
    '/fsthaw',
    '/collapse',
    '/upgrade',
    '//init/?a=1',
  ])('refuses %s on the envd port', async (path) => {
    const answer = await send(proxyPort, { host: `49983-isbxa.${DOMAIN}`, method: 'POST', path })
    expect(answer.status).toBe(404)
    expect(json(answer)).toEqual({
      message:
        'This endpoint is reserved for the E2B control plane and is not reachable through the sandbox URL',
      path: path.startsWith('//') ? '/init' : path,
      code: 404,
    })
  })

  it('lets /init through on other ports', async () => {
    const answer = await send(proxyPort, { host: `${portA}-isbxa.${DOMAIN}`, path: '/init' })
    expect(json(answer)).toMatchObject({ server: 'a', path: '/init' })
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
