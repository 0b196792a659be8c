import { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

const api = (method: string, path: string, body?: unknown) =>
  callApi(serve.client, method, path, body)

// Security, limits and logs through `sandbar serve` (wire contract §1.4, §3.2, §4.4, §4.6).
// The service allows one sandbox at a time, so one private, secure, auto-resuming sandbox
// serves the whole file; the concurrency race comes last, after it is killed.

const ENVD_PORT = 49983
const LIMIT_TEXT =
  'you have reached the maximum number of concurrent sandboxes on this Sandbar server (1). Kill or pause one, or have its operator restart sandbar serve with a higher --max-sandboxes (its start output says what bounds the limit on this host)'

let serve: ServeInstance
let sandbox: Sandbox
let envdAccessToken: string
const opts = () => ({ ...serve.client })

beforeAll(async () => {
  serve = await startServe(['--max-sandboxes', '1'])
  sandbox = await Sandbox.create({
    ...opts(),
    timeoutMs: 300_000,
    network: { allowPublicTraffic: false },
    lifecycle: { onTimeout: 'pause', autoResume: true },
  })
  // The SDK keeps the envd token to itself; connect answers it like create (§1.3 Sandbox).
  const connected = await api('POST', `/sandboxes/${sandbox.sandboxId}/connect`, { timeout: 300 })
  envdAccessToken = connected.body.envdAccessToken
})

afterAll(async () => {
  if (sandbox !== undefined) await Sandbox.kill(sandbox.sandboxId, opts())
  const leaks = await serve?.stop()
  expect(leaks).toEqual([])
})

/** A request through the proxy, routed by the `E2b-Sandbox-*` headers (§4.6). */
async function proxied(port: number, path: string, headers: Record<string, string> = {}) {
  const routing = { 'E2b-Sandbox-Id': sandbox.sandboxId, 'E2b-Sandbox-Port': String(port) }
  // Connect RPC paths take a POST with a JSON body (§3.4); the rest are plain GETs.
  const rpc = path.startsWith('/process.')
  const answer = await fetch(`${serve.client.sandboxUrl}${path}`, {
    method: rpc ? 'POST' : 'GET',
    headers: { ...routing, ...(rpc ? { 'content-type': 'application/json' } : {}), ...headers },
    body: rpc ? '{}' : undefined,
  })
  return { status: answer.status, text: await answer.text() }
}

describe('secure envd (§3.2)', () => {
  it('refuses envd calls without the access token and serves the SDK that has it', async () => {
    const refusal = {
      code: 401,
      message:
        'unauthorized access, please provide a valid access token or method signing if supported',
    }
    const missing = await proxied(ENVD_PORT, '/process.Process/List')
    expect(missing.status).toBe(401)
    expect(JSON.parse(missing.text)).toEqual(refusal)
    const wrong = await proxied(ENVD_PORT, '/process.Process/List', { 'X-Access-Token': 'nope' })
    expect(wrong.status).toBe(401)
    expect(JSON.parse(wrong.text)).toEqual(refusal)
    const right = await proxied(ENVD_PORT, '/process.Process/List', {
      'X-Access-Token': envdAccessToken,
    })
    expect(right.status).toBe(200)
    expect((await sandbox.commands.run('echo secure')).stdout).toBe('secure\n')
  })
})

describe('private traffic (§4.6)', () => {
  it('needs e2b-traffic-access-token on the sandbox ports', async () => {
    const token = sandbox.trafficAccessToken
    expect(token).toMatch(/\S+/)
    await sandbox.commands.run('python3 -m http.server 8000', { background: true, timeoutMs: 0 })
    const withToken = { 'e2b-traffic-access-token': token ?? '' }
    await expect
      .poll(async () => (await proxied(8000, '/', withToken)).status, { timeout: 15_000 })
      .toBe(200)
    const missing = await proxied(8000, '/')
    expect(missing.status).toBe(403)
    expect(JSON.parse(missing.text)).toEqual({
      sandboxId: sandbox.sandboxId,
      message:
        "Sandbox is secured with traffic access token. Token header 'e2b-traffic-access-token' is missing",
      code: 403,
    })
    const wrong = await proxied(8000, '/', { 'e2b-traffic-access-token': 'nope' })
    expect(wrong.status).toBe(403)
    expect(JSON.parse(wrong.text)).toEqual({
      sandboxId: sandbox.sandboxId,
      message:
        "Sandbox is secured with traffic access token. Provided token in header 'e2b-traffic-access-token' is invalid",
      code: 403,
    })
  })
})

describe('concurrency limit (§1.4)', () => {
  it('answers 429 with the catalog text past --max-sandboxes', async () => {
    const refused = await api('POST', '/sandboxes', { templateID: 'base' })
    expect(refused).toEqual({ status: 429, body: { code: 429, message: LIMIT_TEXT } })
  })
})

describe('auto-resume (§4.4)', () => {
  it('resumes a paused sandbox on proxied envd traffic carrying its token', async () => {
    expect(await sandbox.pause()).toBe(true)
    expect((await sandbox.getInfo()).state).toBe('paused')
    const denied = await proxied(ENVD_PORT, '/health', { 'X-Access-Token': 'nope' })
    expect(denied.status).toBe(403)
    expect(JSON.parse(denied.text)).toMatchObject({
      sandboxId: sandbox.sandboxId,
      message:
        "This sandbox can't be resumed with the credentials provided. Check your access token and try again.",
      code: 403,
    })
    const woken = await proxied(ENVD_PORT, '/health', { 'X-Access-Token': envdAccessToken })
    expect(woken.status).toBe(204)
    expect((await sandbox.getInfo()).state).toBe('running')
    expect((await sandbox.commands.run('echo awake')).stdout).toBe('awake\n')
  })
})

describe('sandbox logs (§1.2, §1.3)', () => {
  type Entry = { timestamp: string; level: string; message: string; fields: Record<string, string> }
  const logs = async (query = ''): Promise<Entry[]> => {
    const answer = await api('GET', `/v2/sandboxes/${sandbox.sandboxId}/logs${query}`)
    expect(answer.status).toBe(200)
    return answer.body.logs
  }
  // Lifecycle events are the "sandbox …" messages; envd's own lines have other messages.
  const lifecycleQuery = `?search=${encodeURIComponent('sandbox ')}`

  it('records lifecycle events in both log forms', async () => {
    await sandbox.updateNetwork({ denyOut: ['10.1.2.0/24'] })
    const lifecycle = await logs(lifecycleQuery)
    expect(lifecycle.map((entry) => entry.fields.event)).toEqual([
      'created',
      'paused',
      'resumed',
      'network updated',
    ])
    expect(lifecycle[3]).toEqual({
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      level: 'info',
      message: 'sandbox network updated',
      fields: {
        event: 'network updated',
        sandboxID: sandbox.sandboxId,
        allowOut: '',
        denyOut: '10.1.2.0/24',
      },
    })
    const all = await logs()
    const v1 = await api('GET', `/sandboxes/${sandbox.sandboxId}/logs?limit=2`)
    expect(v1.status).toBe(200)
    expect(v1.body.logEntries).toEqual(all.slice(0, 2))
    expect(v1.body.logs).toEqual(
      all.slice(0, 2).map((entry) => ({ timestamp: entry.timestamp, line: entry.message })),
    )
    const since = Date.parse(lifecycle[3]?.timestamp ?? '')
    expect((await logs(`${lifecycleQuery}&cursor=${since}`)).at(-1)).toEqual(lifecycle[3])
    const unknown = await api('GET', '/v2/sandboxes/nosuchsandbox/logs')
    expect(unknown.status).toBe(404)
  })

  it("keeps envd's own log: the commands run, filtered by level and text, newest first on request", async () => {
    await sandbox.commands.run('echo logged-command')
    const started = await logs(`?search=${encodeURIComponent('process started')}`)
    expect(started.at(-1)).toEqual({
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      level: 'info',
      message: 'process started',
      fields: expect.objectContaining({
        cmd: '/bin/bash',
        args: '["-l","-c","echo logged-command"]',
        user: 'user',
        pid: expect.stringMatching(/^\d+$/),
      }),
    })
    const messages = (entries: Entry[]) => entries.map((entry) => entry.message)
    expect(messages(await logs('?level=debug'))).toContain('process started')
    expect(messages(await logs('?level=warn'))).not.toContain('process started')
    const forward = await logs()
    const backward = await logs('?direction=backward&limit=3')
    expect(backward).toEqual(forward.slice(-3).reverse())
  })

  it('refuses bad log queries with 400', async () => {
    for (const query of [
      'level=verbose',
      'direction=sideways',
      'limit=1001',
      'limit=-1',
      'cursor=yesterday',
      `search=${'a'.repeat(257)}`,
    ]) {
      const answer = await api('GET', `/v2/sandboxes/${sandbox.sandboxId}/logs?${query}`)
      expect({ query, status: answer.status, code: answer.body.code }).toEqual({
        query,
        status: 400,
        code: 400,
      })
      expect(answer.body.message).toMatch(/^validation error: /)
    }
  })
})

describe('resume at the limit (§1.4)', () => {
  it('refuses to resume a paused sandbox while another holds the only slot', async () => {
    expect(await sandbox.pause()).toBe(true)
    const other = await api('POST', '/sandboxes', { templateID: 'base' })
    expect(other.status).toBe(201)
    try {
      const refused = await api('POST', `/sandboxes/${sandbox.sandboxId}/connect`, { timeout: 300 })
      expect(refused).toEqual({ status: 429, body: { code: 429, message: LIMIT_TEXT } })
      expect((await sandbox.getInfo()).state).toBe('paused')
    } finally {
      await Sandbox.kill(other.body.sandboxID, opts())
    }
    const resumed = await api('POST', `/sandboxes/${sandbox.sandboxId}/connect`, { timeout: 300 })
    expect(resumed.status).toBe(201)
    expect((await sandbox.commands.run('echo back')).stdout).toBe('back\n')
  })
})

describe('concurrent creates at the limit', () => {
  it('lets exactly one of two simultaneous creates through', async () => {
    // Output written just before the kill still reaches the logs.
    await sandbox.commands.run('echo last-words')
    await sandbox.kill()
    const killedLogs = await api('GET', `/v2/sandboxes/${sandbox.sandboxId}/logs`)
    expect(killedLogs.body.logs.at(-1).fields.event).toBe('killed')
    const args = killedLogs.body.logs.map(
      (entry: { fields: { args?: string } }) => entry.fields.args,
    )
    expect(args).toContain('["-l","-c","echo last-words"]')
    const answers = await Promise.all([
      api('POST', '/sandboxes', { templateID: 'base' }),
      api('POST', '/sandboxes', { templateID: 'base' }),
    ])
    const created = answers.filter((answer) => answer.status === 201)
    const refused = answers.filter((answer) => answer.status === 429)
    try {
      expect(created).toHaveLength(1)
      expect(refused).toEqual([{ status: 429, body: { code: 429, message: LIMIT_TEXT } }])
    } finally {
      for (const answer of created) await Sandbox.kill(answer.body.sandboxID, opts())
    }
  })
})
