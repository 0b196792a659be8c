import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ServeInstance, startServe } from './serve-fixture.js'

// The parts of the wire contract (§1.1, §1.3, §1.4, Addendum) that the current SDK does not
// reach: v1 create and connect, legacy IDs, exact error bodies and list headers.

let serve: ServeInstance

beforeAll(async () => {
  serve = await startServe()
})

afterAll(async () => {
  const leaks = await serve?.stop()
  expect(leaks).toEqual([])
})

async function call(method: string, path: string, body?: unknown, key?: string) {
  const answer = await fetch(`${serve.client.apiUrl}${path}`, {
    method,
    headers: { 'X-API-Key': key ?? serve.client.apiKey, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await answer.text()
  return {
    status: answer.status,
    headers: answer.headers,
    body: text === '' ? null : JSON.parse(text),
  }
}

describe('errors', () => {
  it('rejects an unknown key with the contract text', async () => {
    const answer = await call('GET', '/v2/sandboxes', undefined, `e2b_${'1'.repeat(40)}`)
    expect(answer.status).toBe(401)
    expect(answer.body.code).toBe(401)
    expect(answer.body.message).toMatch(
      /^Invalid API key, please visit https:\/\/e2b\.dev\/docs\/api-key for more information\.\n/,
    )
  })

  it('rejects bad create bodies', async () => {
    expect(await call('POST', '/sandboxes', { templateID: 'base', timeout: 0 })).toMatchObject({
      status: 400,
      body: { code: 400, message: 'Timeout must be greater than 0' },
    })
    const missing = await call('POST', '/sandboxes', {})
    expect(missing.status).toBe(400)
    expect(missing.body.message).toMatch(/^validation error: /)
    const privateV1 = await call('POST', '/sandboxes', {
      templateID: 'base',
      network: { allowPublicTraffic: false },
    })
    expect(privateV1).toMatchObject({
      status: 400,
      body: {
        code: 400,
        message:
          "You cannot create a sandbox without public access unless you enable secure envd access via 'secure' flag.",
      },
    })
  })

  it('rejects a path ID of more than two parts', async () => {
    expect(await call('GET', '/sandboxes/a-b-c')).toMatchObject({
      status: 400,
      body: { code: 400, message: 'Invalid sandbox ID' },
    })
  })
})

describe('v1 create, legacy IDs, pause and connect', () => {
  it('follows the contract through a sandbox life', async () => {
    const created = await call('POST', '/sandboxes', { templateID: 'base', timeout: 60 })
    expect(created.status).toBe(201)
    const id: string = created.body.sandboxID
    expect(created.body).toEqual({
      templateID: 'base',
      sandboxID: id,
      alias: 'base',
      clientID: '6532622b',
      envdVersion: '0.6.13',
      trafficAccessToken: null,
      // The service's own domain, which the SDK builds getHost() from (E2B sets it for BYOC).
      domain: serve.client.domain,
    })
    const detail = await call('GET', `/sandboxes/${id}-6532622b`)
    expect(detail.body).toMatchObject({
      sandboxID: id,
      state: 'running',
      clientID: '6532622b',
      domain: serve.client.domain,
    })

    expect((await call('POST', `/sandboxes/${id}/connect`, {})).status).toBe(400)
    expect((await call('POST', `/sandboxes/${id}/connect`, { timeout: 30 })).status).toBe(200)
    expect((await call('POST', `/sandboxes/${id}/pause`)).status).toBe(204)
    expect(await call('POST', `/sandboxes/${id}/pause`)).toMatchObject({
      status: 409,
      body: { code: 409, message: `Error pausing sandbox - sandbox '${id}' is already paused` },
    })
    expect((await call('GET', `/sandboxes/${id}`)).body.state).toBe('paused')
    expect((await call('POST', `/v2/sandboxes/${id}/connect`, {})).status).toBe(201)
    expect((await call('GET', `/sandboxes/${id}`)).body.state).toBe('running')
    expect((await call('DELETE', `/sandboxes/${id}`)).status).toBe(204)
    expect((await call('POST', `/sandboxes/${id}/connect`, { timeout: 30 })).status).toBe(404)
  })
})

describe('v2 create and list', () => {
  it('gives v2 sandboxes tokens and pages the list', async () => {
    const secret = await call('POST', '/v2/sandboxes', {
      templateID: 'base',
      network: { allowPublicTraffic: false },
      metadata: { page: 'yes' },
    })
    expect(secret.status).toBe(201)
    expect(secret.body.envdAccessToken).toMatch(/^[0-9a-f]{64}$/)
    expect(secret.body.trafficAccessToken).toMatch(/^[0-9a-f]{64}$/)
    const plain = await call('POST', '/v2/sandboxes', {
      templateID: 'base',
      metadata: { page: 'yes' },
    })
    expect(plain.body.trafficAccessToken).toBeNull()
    const ids = [secret.body.sandboxID, plain.body.sandboxID]

    const filter = `metadata=${encodeURIComponent('page=yes')}`
    const first = await call('GET', `/v2/sandboxes?${filter}&limit=1`)
    expect(first.body).toHaveLength(1)
    expect(first.headers.get('x-total-running')).toBe('2')
    const token = first.headers.get('x-next-token')
    expect(token).toBeTruthy()
    const second = await call(
      'GET',
      `/v2/sandboxes?${filter}&limit=1&nextToken=${encodeURIComponent(token ?? '')}`,
    )
    expect(second.body).toHaveLength(1)
    expect(second.headers.get('x-next-token')).toBeNull()
    expect([first.body[0].sandboxID, second.body[0].sandboxID].sort()).toEqual([...ids].sort())
    expect((await call('GET', '/v2/sandboxes?state=paused')).body).toEqual([])
    for (const id of ids) expect((await call('DELETE', `/sandboxes/${id}`)).status).toBe(204)
  })
})
