import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { initEnvd, initLockedEnvd, waitForEnvd } from '../../../src/agent/envd-client.js'

let server: Server | undefined

afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined))
  server = undefined
})

/** Serves `handler` on a loopback port; answers its URL. */
async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/**
 * An envd's `/init` and `/envs` as far as the agent's checks reach them: `/init` takes pushes
 * carrying the control secret unless `lock` is off; `/envs` wants the pushed token unless
 * `gate` is off and holds the pushed env vars unless `keepEnv` is off.
 */
function fakeEnvd(secret: string, { lock = true, gate = true, keepEnv = true } = {}) {
  let token: string | undefined
  let envs: Record<string, string> = {}
  return (req: IncomingMessage, res: ServerResponse) => {
    let body = ''
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString()
    })
    req.on('end', () => res.writeHead(answer(req, body)).end(JSON.stringify(envs)))
  }

  function answer(req: IncomingMessage, body: string): number {
    if (req.url === '/init') {
      if (lock && req.headers['x-sandbar-control'] !== secret) return 401
      const pushed = JSON.parse(body) as { accessToken?: string; envVars: Record<string, string> }
      token = pushed.accessToken
      if (keepEnv) envs = pushed.envVars
      return 204
    }
    if (gate && token !== undefined && req.headers['x-access-token'] !== token) return 401
    return 200
  }
}

describe('pushing /init and checking the lock from outside', () => {
  const secret = 'a-control-secret-of-at-least-32-bytes'
  const init = { envVars: { A: '1' }, accessToken: 'token' }

  it('passes an envd that holds the push and its locks', async () => {
    const url = await listen(fakeEnvd(secret))
    await expect(initLockedEnvd(url, init, secret)).resolves.toBeUndefined()
  })

  it('fails a create whose envd takes /init without the control secret', async () => {
    const url = await listen(fakeEnvd(secret, { lock: false }))
    await expect(initLockedEnvd(url, init, secret)).rejects.toThrow(
      'envd accepted /init without the control secret (204)',
    )
  })

  it('fails a create whose envd answers without the access token', async () => {
    const url = await listen(fakeEnvd(secret, { gate: false }))
    await expect(initLockedEnvd(url, init, secret)).rejects.toThrow(
      'envd answered /envs without the access token (200)',
    )
  })

  it('fails a create whose envd does not hold the pushed env vars', async () => {
    const url = await listen(fakeEnvd(secret, { keepEnv: false }))
    await expect(initLockedEnvd(url, init, secret)).rejects.toThrow(
      'envd does not hold the pushed env vars (/envs 200)',
    )
  })

  it('waits for an envd that takes longer than an idle connection lives to answer', async () => {
    // Under a burst of creates an envd may take seconds to answer; an idle kept-alive
    // connection is closed after 5 s, one waiting for its answer must not be.
    const envd = fakeEnvd(secret)
    const url = await listen((req, res) => {
      setTimeout(() => envd(req, res), 5_500)
    })
    await expect(initEnvd(url, init, secret)).resolves.toBeUndefined()
  }, 10_000)

  it('fails a create whose envd refuses the push itself', async () => {
    const url = await listen(fakeEnvd('another secret entirely, 32 bytes long'))
    await expect(initLockedEnvd(url, init, secret)).rejects.toThrow('envd /init answered 401')
  })
})

/** A /health that answers 503 until `readyAfterMs` has passed, then 204. */
async function healthAfter(readyAfterMs: number): Promise<string> {
  const ready = Date.now() + readyAfterMs
  return listen((_req, res) => {
    res.writeHead(Date.now() >= ready ? 204 : 503)
    res.end()
  })
}

describe('waiting for envd', () => {
  it('returns once /health answers 204, checking the container only now and then', async () => {
    const url = await healthAfter(250)
    let checks = 0
    const started = Date.now()
    await waitForEnvd(url, {
      timeoutMs: 5_000,
      stillStarting: () => {
        checks++
        return true
      },
    })
    const elapsed = Date.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(200)
    // Polled every 5 ms, but the container checked every 100 ms.
    expect(checks).toBeGreaterThanOrEqual(1)
    expect(checks).toBeLessThanOrEqual(Math.floor(elapsed / 100))
  })

  it('waits for envd to listen at all, then for /health', async () => {
    const url = await healthAfter(0)
    const port = Number(new URL(url).port)
    await new Promise((resolve) => server?.close(resolve))
    const started = Date.now()
    const waited = waitForEnvd(url, { timeoutMs: 5_000, stillStarting: () => true })
    await new Promise((resolve) => setTimeout(resolve, 200))
    server?.listen(port, '127.0.0.1')
    await waited
    expect(Date.now() - started).toBeGreaterThanOrEqual(200)
  })

  it('fails fast when the container died', async () => {
    const url = await healthAfter(60_000)
    const started = Date.now()
    await expect(
      waitForEnvd(url, { timeoutMs: 5_000, stillStarting: () => false }),
    ).rejects.toThrow('the sandbox stopped before envd answered')
    expect(Date.now() - started).toBeLessThan(1_000)
  })

  it('gives up on a /health that never answers, at the deadline', async () => {
    // The request's headers are read and left unanswered: only the poll's own timeout ends it.
    const url = await listen(() => undefined)
    const started = Date.now()
    await expect(waitForEnvd(url, { timeoutMs: 300, stillStarting: () => true })).rejects.toThrow(
      `envd at ${url} did not answer within 300 ms`,
    )
    // One poll waits up to a second for its answer, then the deadline has passed.
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  it('gives up at the deadline', async () => {
    const url = await healthAfter(60_000)
    await expect(waitForEnvd(url, { timeoutMs: 150, stillStarting: () => true })).rejects.toThrow(
      `envd at ${url} did not answer within 150 ms`,
    )
  })
})
