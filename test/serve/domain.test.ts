import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi, clientEnvVariables } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// The set-up README's first command gives: client.env's E2B_DOMAIN, through which every SDK
// release reaches the API at `https://api.<domain>` and sandboxes at `https://<port>-<id>.<domain>`.
const run = promisify(execFile)
let serve: ServeInstance

beforeAll(async () => {
  serve = await startServe()
})

afterAll(async () => {
  expect(await serve?.stop()).toEqual([])
})

/** The observations of test/serve/clients/domain-client.mjs, run with `sdk` and client.env. */
interface DomainClientReport {
  sandboxId: string
  host: string
  user: string
  failure: { name: string; exitCode: number } | string
  listed: string[]
  running: boolean
  runningAfterKill: boolean
  download: { url: string; status: number; body: string }
  upload: { url: string; status: number }
  uploaded: string
  curlHttp: string
  curlHttps: string
  connectedHost: string
}

/** Runs the client program as a user would: its environment is client.env and PATH, nothing else. */
async function runDomainClient(sdk: string): Promise<DomainClientReport> {
  const { stdout } = await run(process.execPath, ['test/serve/clients/domain-client.mjs', sdk], {
    env: { PATH: process.env.PATH, ...clientEnvVariables(serve.clientEnvText) },
    timeout: 90_000,
  })
  return JSON.parse(stdout) as DomainClientReport
}

describe('client.env', () => {
  it('names the domain, the volume content URL, the key and the authority of the proxy certificate', async () => {
    const variables = clientEnvVariables(serve.clientEnvText)
    const proxyPort = new URL(serve.client.sandboxUrl).port
    expect(variables).toEqual({
      E2B_DOMAIN: `sandbar.localhost:${proxyPort}`,
      E2B_VOLUME_API_URL: `https://api.sandbar.localhost:${proxyPort}`,
      E2B_API_KEY: expect.stringMatching(/^e2b_[0-9a-f]{40}$/),
      NODE_EXTRA_CA_CERTS: `${serve.dataDir}/tls/ca.pem`,
    })
    expect(await readFile(`${serve.dataDir}/tls/ca.pem`, 'utf8')).toContain('BEGIN CERTIFICATE')
  })
})

// e2b 2.51 (pinned), 2.0.1 (the first 2.x) and 1.13.2 (the last 1.x). The older two read
// nothing but E2B_DOMAIN, so they work only through the domain, over TLS.
describe.each(['e2b', 'e2b-oldest', 'e2b-v1'])('%s with only client.env', (sdk) => {
  let report: DomainClientReport

  beforeAll(async () => {
    report = await runDomainClient(sdk)
  }, 120_000)

  it('creates a sandbox whose getHost() is on this service, also after connect', () => {
    const domain = clientEnvVariables(serve.clientEnvText).E2B_DOMAIN
    expect(report.host).toBe(`8000-${report.sandboxId}.${domain}`)
    expect(report.connectedHost).toBe(report.host)
  })

  it('runs commands, lists files, sets the timeout and kills', () => {
    expect(report.user).toBe('user')
    expect(report.failure).toEqual({ name: 'CommandExitError', exitCode: 3 })
    expect(report.listed).toContain('note.txt')
    expect(report.running).toBe(true)
    expect(report.runningAfterKill).toBe(false)
  })

  it('serves getHost() to curl over plain HTTP and over HTTPS', () => {
    expect(report.curlHttp).toBe('sandbox\n')
    expect(report.curlHttps).toBe('sandbox\n')
  })

  it('makes download and upload URLs that plain fetch can use', () => {
    expect(new URL(report.download.url).host).toBe(
      `49983-${report.sandboxId}.${serve.client.domain}`,
    )
    expect(report.download).toMatchObject({ status: 200, body: 'written through the SDK' })
    expect(report.upload.status).toBe(200)
    expect(report.uploaded).toBe('sent with plain fetch')
  })
})

describe("the sandbox domain in the API's answers", () => {
  it('is returned by create, connect and getInfo', async () => {
    const sandbox = await Sandbox.create({ ...serve.client })
    try {
      const expected = serve.client.domain
      expect(sandbox.getHost(3000)).toBe(`3000-${sandbox.sandboxId}.${expected}`)
      const info = await Sandbox.getInfo(sandbox.sandboxId, serve.client)
      expect(info.sandboxDomain).toBe(expected)
      const connected = await callApi(
        serve.client,
        'POST',
        `/sandboxes/${sandbox.sandboxId}/connect`,
        { timeout: 60 },
      )
      expect(connected.body.domain).toBe(expected)
    } finally {
      await sandbox.kill()
    }
  })
})

// A dev server that answers only the hosts it allows, as Vite, webpack and Next.js do; the
// proxy forwards the client's own Host unless the sandbox asked for `maskRequestHost`.
const HOST_CHECKING_SERVER = `
import http.server
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        allowed = self.headers['Host'] == 'localhost:5173'
        body = (b'ok ' if allowed else b'Blocked request. This host is not allowed: ') + self.headers['Host'].encode()
        self.send_response(200 if allowed else 403)
        self.send_header('content-length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
http.server.HTTPServer(('0.0.0.0', 5173), Handler).serve_forever()
`

describe('network.maskRequestHost', () => {
  async function devServerAnswer(network?: { maskRequestHost: string }) {
    const sandbox = await Sandbox.create({ ...serve.client, network })
    try {
      await sandbox.files.write('/tmp/dev-server.py', HOST_CHECKING_SERVER)
      await sandbox.commands.run('python3 /tmp/dev-server.py', { background: true })
      await sandbox.commands.run(
        'for i in $(seq 50); do curl -s -o /dev/null localhost:5173 && exit 0; sleep 0.1; done; exit 1',
      )
      const answer = await fetch(`${serve.client.sandboxUrl}/`, {
        headers: { 'E2b-Sandbox-Id': sandbox.sandboxId, 'E2b-Sandbox-Port': '5173' },
      })
      return { status: answer.status, body: await answer.text() }
    } finally {
      await sandbox.kill()
    }
  }

  it('is the Host a user port sees, with its port filled in', async () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: E2B's placeholder, not a template
    expect(await devServerAnswer({ maskRequestHost: 'localhost:${PORT}' })).toEqual({
      status: 200,
      body: 'ok localhost:5173',
    })
  })

  it('leaves the client Host without it, which such a server refuses', async () => {
    const proxyHost = new URL(serve.client.sandboxUrl).host
    expect(await devServerAnswer()).toEqual({
      status: 403,
      body: `Blocked request. This host is not allowed: ${proxyHost}`,
    })
  })
})
