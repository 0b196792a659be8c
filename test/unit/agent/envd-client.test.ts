import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { waitForEnvd } from '../../../src/agent/envd-client.js'

let server: Server | undefined

afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined))
  server = undefined
})

/** A /health that answers 503 until `readyAfterMs` has passed, then 204. */
async function healthAfter(readyAfterMs: number): Promise<string> {
  const ready = Date.now() + readyAfterMs
  server = createServer((_req, res) => {
    res.writeHead(Date.now() >= ready ? 204 : 503)
    res.end()
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

describe('waiting for envd', () => {
  it('returns once /health answers 204, checking the container only now and then', async () => {
    const url = await healthAfter(250)
    let checks = 0
    const started = Date.now()
    await waitForEnvd(url, {
      timeoutMs: 5_000,
      stillStarting: async () => {
        checks++
        return true
      },
    })
    const elapsed = Date.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(200)
    // Polled every 5 ms, but the runtime is asked about the container every 100 ms.
    expect(checks).toBeGreaterThanOrEqual(1)
    expect(checks).toBeLessThanOrEqual(Math.floor(elapsed / 100))
  })

  it('fails fast when the container died', async () => {
    const url = await healthAfter(60_000)
    const started = Date.now()
    await expect(
      waitForEnvd(url, { timeoutMs: 5_000, stillStarting: async () => false }),
    ).rejects.toThrow('the sandbox stopped before envd answered')
    expect(Date.now() - started).toBeLessThan(1_000)
  })

  it('gives up at the deadline', async () => {
    const url = await healthAfter(60_000)
    await expect(
      waitForEnvd(url, { timeoutMs: 150, stillStarting: async () => true }),
    ).rejects.toThrow(`envd at ${url} did not answer within 150 ms`)
  })
})
