import { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rawPost, rawRequest } from '../support/raw-http.js'
import { callApi } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// The proxy as an attacker meets it (issue 9): a client holding a sandbox URL, and the sandbox's
// envd token, must not reach envd's control routes by any spelling, and code in the sandbox
// must not see the credentials that clients send to Sandbar.

const ENVD_PORT = 49983

const routingTo = (port: number) => ({
  Host: `localhost:${proxyPort}`,
  'E2b-Sandbox-Id': sandbox.sandboxId,
  'E2b-Sandbox-Port': String(port),
})

let serve: ServeInstance
let sandbox: Sandbox
let envdAccessToken: string
let proxyPort: number

beforeAll(async () => {
  serve = await startServe()
  proxyPort = Number(new URL(serve.client.sandboxUrl).port)
  sandbox = await Sandbox.create({
    ...serve.client,
    timeoutMs: 300_000,
    network: { allowPublicTraffic: false },
  })
  const connected = await callApi(serve.client, 'POST', `/sandboxes/${sandbox.sandboxId}/connect`, {
    timeout: 300,
  })
  envdAccessToken = connected.body.envdAccessToken
})

afterAll(async () => {
  if (sandbox !== undefined) await Sandbox.kill(sandbox.sandboxId, serve.client)
  const leaks = await serve?.stop()
  expect(leaks).toEqual([])
})

describe("envd's control routes through the proxy (§4.6)", () => {
  it('refuses every spelling of /init, and envd never applies one', async () => {
    const routing = { ...routingTo(ENVD_PORT), 'X-Access-Token': envdAccessToken }
    const spellings = [
      '/./init',
      '/%2e/init',
      '/x/../init',
      '/files/../init',
      '/x/%2E%2E/init',
      '//x/init',
      '/\\x\\init',
      `http://localhost:${proxyPort}/init`,
      '/init#x',
    ]
    const answers = []
    for (const target of spellings) {
      const body = JSON.stringify({ accessToken: envdAccessToken, envVars: { INJECTED: target } })
      answers.push(await rawRequest(proxyPort, rawPost(target, routing, body)))
    }
    expect(answers).toEqual(spellings.map(() => ({ status: 400, body: 'Invalid request path\n' })))
    const plain = await rawRequest(proxyPort, rawPost('/init', routing, '{}'))
    expect(plain.status).toBe(404)
    const run = await sandbox.commands.run('printenv INJECTED || echo unset')
    expect(run.stdout).toBe('unset\n')
  })

  it("keeps envd up when a target is one envd's URL parser throws on", async () => {
    const routing = routingTo(ENVD_PORT)
    for (const target of ['//', '//:x/health']) {
      const answer = await rawRequest(proxyPort, rawPost(target, routing, '{}'))
      expect(answer).toEqual({ status: 400, body: 'Invalid request path\n' })
    }
    expect((await sandbox.commands.run('echo up')).stdout).toBe('up\n')
  })
})

describe("Sandbar's credentials stay out of the sandbox", () => {
  it('reach a sandbox service without the API key, the traffic token or the envd token', async () => {
    await sandbox.files.write(
      '/home/user/echo_headers.py',
      [
        'import http.server, json',
        'class Echo(http.server.BaseHTTPRequestHandler):',
        '    def do_GET(self):',
        '        body = json.dumps({k.lower(): v for k, v in self.headers.items()}).encode()',
        '        self.send_response(200)',
        "        self.send_header('content-length', str(len(body)))",
        '        self.end_headers()',
        '        self.wfile.write(body)',
        "http.server.HTTPServer(('0.0.0.0', 8000), Echo).serve_forever()",
        '',
      ].join('\n'),
    )
    await sandbox.commands.run('python3 /home/user/echo_headers.py', {
      background: true,
      timeoutMs: 0,
    })
    const headers = {
      'E2b-Sandbox-Id': sandbox.sandboxId,
      'E2b-Sandbox-Port': '8000',
      'e2b-traffic-access-token': sandbox.trafficAccessToken ?? '',
      'X-API-Key': serve.client.apiKey,
      'X-Access-Token': envdAccessToken,
      'X-App': 'kept',
    }
    const seen = async () => {
      const answer = await fetch(`${serve.client.sandboxUrl}/`, { headers })
      return answer.status === 200 ? ((await answer.json()) as Record<string, string>) : {}
    }
    await expect.poll(seen, { timeout: 15_000 }).toHaveProperty('x-app', 'kept')
    const received = await seen()
    expect(received).not.toHaveProperty('x-api-key')
    expect(received).not.toHaveProperty('e2b-traffic-access-token')
    expect(received).not.toHaveProperty('x-access-token')
  })
})

describe("the proxy follows a sandbox's state (its row is kept in memory)", () => {
  it('reaches a running sandbox only: not once paused, again once resumed, never once killed', async () => {
    const own = await Sandbox.create({ ...serve.client, timeoutMs: 300_000 })
    const health = async () => {
      const answer = await fetch(`${serve.client.sandboxUrl}/health`, {
        headers: { 'E2b-Sandbox-Id': own.sandboxId, 'E2b-Sandbox-Port': String(ENVD_PORT) },
        // A proxy still sending to a frozen envd would wait here for ever.
        signal: AbortSignal.timeout(5_000),
      })
      return { status: answer.status, body: await answer.text() }
    }
    const notFound = {
      status: 502,
      body: JSON.stringify({
        sandboxId: own.sandboxId,
        message: 'The sandbox was not found',
        code: 502,
      }),
    }
    try {
      expect(await health()).toEqual({ status: 204, body: '' })
      await own.pause()
      expect(await health()).toEqual(notFound)
      await Sandbox.connect(own.sandboxId, serve.client)
      expect(await health()).toEqual({ status: 204, body: '' })
    } finally {
      await own.kill()
    }
    expect(await health()).toEqual(notFound)
  })
})
