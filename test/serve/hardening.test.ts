import { execFile } from 'node:child_process'
import { chmod, readFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// What an unprivileged host user and an API client could take from `sandbar serve` before
// issue 9: the store and its tokens (item 5), the API key from the service's output (item 7),
// and memory or a 500 from oversized or malformed requests (item 16).

let serve: ServeInstance
let sandbox: Sandbox
/** The sandbox's tokens as the API hands them out (§1.3 Sandbox, on connect). */
let tokens: { envd: string; traffic: string }
const opts = () => ({ ...serve.client })
const api = (method: string, route: string, body?: unknown) =>
  callApi(serve.client, method, route, body)

beforeAll(async () => {
  serve = await startServe()
  sandbox = await Sandbox.create({ ...opts(), network: { allowPublicTraffic: false } })
  const connected = await api('POST', `/sandboxes/${sandbox.sandboxId}/connect`, { timeout: 300 })
  tokens = { envd: connected.body.envdAccessToken, traffic: connected.body.trafficAccessToken }
})

afterAll(async () => {
  try {
    if (sandbox !== undefined) await Sandbox.kill(sandbox.sandboxId, opts())
  } finally {
    // Also when the service is down: stop() removes what it left on the host.
    const leaks = await serve?.stop()
    expect(leaks).toEqual([])
  }
})

/** Runs a command as `nobody`, an unprivileged host user: its exit code and stderr. */
async function asNobody(...argv: string[]): Promise<{ code: number; stderr: string }> {
  const setpriv = ['--reuid=65534', '--regid=65534', '--clear-groups', ...argv]
  return promisify(execFile)('setpriv', setpriv).then(
    ({ stderr }) => ({ code: 0, stderr }),
    (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  )
}

/** What `nobody` gets from the data directory: every attempt must be refused. */
async function readableByNobody(): Promise<string[]> {
  const readable: string[] = []
  const listing = await asNobody('ls', serve.dataDir)
  if (listing.code === 0 || !listing.stderr.includes('Permission denied'))
    readable.push(`ls ${serve.dataDir}: ${listing.code} ${listing.stderr}`)
  for (const name of [
    'sandbar.db',
    'sandbar.db-wal',
    'sandbar.db-shm',
    'client.env',
    'token.key',
  ]) {
    const file = path.join(serve.dataDir, name)
    const read = await asNobody('cat', file)
    if (read.code === 0 || !read.stderr.includes('Permission denied'))
      readable.push(`cat ${name}: ${read.code} ${read.stderr}`)
  }
  return readable
}

/** Every byte of the SQLite store as text: what a copy of the files would show. */
async function storeBytes(): Promise<string> {
  const files = ['sandbar.db', 'sandbar.db-wal']
  const contents = await Promise.all(files.map((name) => readFile(path.join(serve.dataDir, name))))
  return Buffer.concat(contents).toString('latin1')
}

describe('the store is the service’s alone (issue 9 item 5)', () => {
  it('refuses nobody the data directory, the store, its WAL, client.env and the token key', async () => {
    expect(tokens.envd).toMatch(/\S{16,}/)
    expect(await readableByNobody()).toEqual([])
  })

  it('keeps no token in the store files in plaintext', async () => {
    const bytes = await storeBytes()
    expect(bytes).not.toContain(tokens.envd)
    expect(bytes).not.toContain(tokens.traffic)
  })

  it('tightens an install whose files were world-readable, and prints the key only once', async () => {
    const { apiKey } = serve.client
    expect(serve.output()).toContain(`export E2B_API_KEY=${apiKey}`)
    await serve.crashAndRestart(async () => {
      await chmod(serve.dataDir, 0o755)
      for (const name of ['sandbar.db', 'sandbar.db-wal', 'sandbar.db-shm', 'client.env'])
        await chmod(path.join(serve.dataDir, name), 0o644)
      await chmod(path.join(serve.dataDir, 'token.key'), 0o644)
    })
    expect(await readableByNobody()).toEqual([])
    // The sandbox, its tokens and the key all survived the restart.
    const connected = await api('POST', `/sandboxes/${sandbox.sandboxId}/connect`, {
      timeout: 300,
    })
    expect(connected.body.envdAccessToken).toBe(tokens.envd)
    expect((await sandbox.commands.run('echo still')).stdout).toBe('still\n')

    // Item 7: the second start names the file, never the key; logs carry no secret.
    const printed = serve.output()
    expect(printed).toContain(path.join(serve.dataDir, 'client.env'))
    for (const secret of [apiKey, tokens.envd, tokens.traffic])
      expect(printed).not.toContain(secret)
  })
})

describe('request bounds (issue 9 item 16)', () => {
  const tooLarge = { code: 413, message: 'request body is larger than 1048576 bytes' }

  /** The service's resident memory in MiB (`VmRSS`). */
  async function rssMiB(): Promise<number> {
    const status = await readFile(`/proc/${serve.pid()}/status`, 'utf8')
    const kB = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1])
    return kB / 1024
  }

  it('refuses a 60 MB body with 413 before reading it', async () => {
    const before = await rssMiB()
    const body = JSON.stringify({ templateID: 'base', metadata: { big: 'x'.repeat(60_000_000) } })
    const answer = await fetch(`${serve.client.apiUrl}/sandboxes`, {
      method: 'POST',
      headers: { 'X-API-Key': serve.client.apiKey, 'content-type': 'application/json' },
      body,
    })
    expect(answer.status).toBe(413)
    expect(await answer.json()).toEqual(tooLarge)
    expect(await rssMiB()).toBeLessThan(before + 30)
  })

  it('refuses a streamed body once it passes the limit', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        // Far past the limit, in case the service read it all.
        if (sent++ < 200) controller.enqueue(chunk)
        else controller.close()
      },
    })
    const answer = await fetch(`${serve.client.apiUrl}/sandboxes`, {
      method: 'POST',
      headers: { 'X-API-Key': serve.client.apiKey, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit)
    expect(answer.status).toBe(413)
    expect(await answer.json()).toEqual(tooLarge)
  })

  it('bounds envVars and metadata with a clear 400', async () => {
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 'v']))
    await expect(Sandbox.create({ ...opts(), metadata: many })).rejects.toThrow(
      'metadata must have at most 100 entries',
    )
    const cases: [Record<string, unknown>, string][] = [
      [{ envVars: { 'A=B': 'x' } }, 'envVars keys must not contain = or NUL'],
      [{ envVars: { ['K'.repeat(257)]: 'x' } }, 'envVars keys must be 1 to 256 characters long'],
      [
        { envVars: { A: 'x'.repeat(65_537) } },
        'envVars values must be at most 65536 characters long',
      ],
      [
        { metadata: { k: 'x'.repeat(4097) } },
        'metadata values must be at most 4096 characters long',
      ],
      [
        { network: { denyOut: Array(257).fill('10.0.0.1') } },
        'at most 256 entries per egress list',
      ],
    ]
    for (const [fields, message] of cases) {
      const answer = await api('POST', '/v2/sandboxes', { templateID: 'base', ...fields })
      expect(answer.status).toBe(400)
      expect(answer.body).toEqual({
        code: 400,
        message: expect.stringMatching(new RegExp(`^validation error: ✖ ${message}\\n`)),
      })
    }
  })

  it('answers a malformed metadata filter with 400 in both list routes', async () => {
    const refusal = {
      status: 400,
      body: {
        code: 400,
        message: 'validation error: metadata must be URL-encoded key=value pairs joined by &',
      },
    }
    const malformed = encodeURIComponent('user=%zz')
    expect(await api('GET', `/v2/sandboxes?metadata=${malformed}`)).toEqual(refusal)
    expect(await api('GET', `/sandboxes?metadata=${malformed}`)).toEqual(refusal)
    const pairs = Array.from({ length: 101 }, (_, i) => `k${i}=v`).join('&')
    expect(await api('GET', `/v2/sandboxes?metadata=${encodeURIComponent(pairs)}`)).toEqual({
      status: 400,
      body: { code: 400, message: 'validation error: metadata must have at most 100 entries' },
    })
  })
})
