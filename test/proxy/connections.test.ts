import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MapDirectory, startProxy } from './proxy-fixture.js'

// What a client costs the proxy before any sandbox is involved: how long it may hold a
// connection without a request, and how many connections it may hold at once.
const proxies: Array<{ close(): Promise<void> }> = []

afterAll(async () => {
  await Promise.all(proxies.map((proxy) => proxy.close()))
})

async function proxyWith(options: Parameters<typeof startProxy>[1] = {}): Promise<number> {
  const { proxy, port } = await startProxy(new MapDirectory(), options)
  proxies.push(proxy)
  return port
}

/** A TCP connection to the proxy from `localAddress`, once established. */
async function open(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', localAddress })
  socket.on('error', () => {})
  await once(socket, 'connect')
  return socket
}

/** Milliseconds until the proxy closes `socket`, or `undefined` if it is still open after `ms`. */
async function closedWithin(socket: Socket, ms: number): Promise<number | undefined> {
  const started = Date.now()
  const closed = new Promise<number>((resolve) => {
    socket.once('close', () => resolve(Date.now() - started))
  })
  const timer = new Promise<undefined>((resolve) =>
    setTimeout(() => resolve(undefined), ms).unref(),
  )
  return Promise.race([closed, timer])
}

describe('idle connections', () => {
  // A silent connection is closed after 20 s; headers must be complete 20 s after their first
  // byte, which the server checks every 2 s. The bound allows for a busy test machine.
  it('closes one that sends nothing, or trickles its headers, within 25 s', async () => {
    const port = await proxyWith()
    const silent = await open(port)
    const trickle = await open(port)
    trickle.write('GET / HTTP/1.1\r\n')
    const drip = setInterval(() => trickle.write('X-Slow: 1\r\n'), 1_000)
    try {
      const [silentMs, trickleMs] = await Promise.all([
        closedWithin(silent, 30_000),
        closedWithin(trickle, 30_000),
      ])
      expect(silentMs).toBeGreaterThanOrEqual(19_000)
      expect(silentMs).toBeLessThanOrEqual(25_000)
      expect(trickleMs).toBeGreaterThanOrEqual(19_000)
      expect(trickleMs).toBeLessThanOrEqual(25_000)
    } finally {
      clearInterval(drip)
      silent.destroy()
      trickle.destroy()
    }
  })
})

describe('connection caps', () => {
  let port = 0
  beforeAll(async () => {
    port = await proxyWith({ connectionLimits: { total: 6, perClient: 3 } })
  })

  it('closes connections past the per-client and the total cap at once', async () => {
    const held = [await open(port), await open(port), await open(port)]
    const overClient = await open(port)
    expect(await closedWithin(overClient, 2_000)).toBeDefined()
    for (const address of ['127.0.0.5', '127.0.0.6', '127.0.0.7']) {
      held.push(await open(port, address))
    }
    const overTotal = await open(port, '127.0.0.8')
    expect(await closedWithin(overTotal, 2_000)).toBeDefined()
    // The held ones still serve requests; a freed slot takes a new connection.
    const first = held.shift()
    first?.destroy()
    if (first !== undefined) await once(first, 'close')
    // The proxy's side of that connection closes a moment after ours.
    await new Promise((resolve) => setTimeout(resolve, 200))
    const again = await open(port)
    again.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
    const [answer] = await once(again, 'data')
    expect(String(answer)).toMatch(/^HTTP\/1\.1 400 Bad Request/)
    for (const socket of [...held, again]) expect(socket.destroyed).toBe(false)
    for (const socket of [...held, again]) socket.destroy()
  })
})
