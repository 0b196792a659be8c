import { type ClientRequest, request } from 'node:http'
import { connect } from 'node:net'
import { Readable } from 'node:stream'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { closedPort, DOMAIN, json, responseTo, send } from './proxy-fixture.js'
import { ADDRESS_A, holdStream, nextStreamCut, startWorld } from './upstreams.js'

let world: Awaited<ReturnType<typeof startWorld>> | undefined
let proxyPort = 0
let portA = 0
let portB = 0

beforeAll(async () => {
  world = await startWorld()
  ;({ proxyPort, portA, portB } = world)
})

afterAll(async () => {
  await world?.stop()
})

beforeEach(() => {
  world?.reset()
})

describe('routing', () => {
  it('routes <port>-<sandboxID>.<domain> hosts to the sandbox, Host kept', async () => {
    const host = `${portB}-isbxb.${DOMAIN}`
    const answer = await send(proxyPort, { host, path: '/whoami?x=1' })
    expect(answer.status).toBe(200)
    expect(json(answer)).toEqual({ server: 'b', host, path: '/whoami?x=1', xff: '127.0.0.1' })
  })

  it('routes E2b-Sandbox-Id and E2b-Sandbox-Port on localhost, an IP and sandbox.<domain>', async () => {
    const headers = { 'E2b-Sandbox-Id': 'isbxa-6532622b', 'E2b-Sandbox-Port': String(portA) }
    for (const host of [`localhost:${proxyPort}`, `127.0.0.1:${proxyPort}`]) {
      expect(json(await send(proxyPort, { host, headers, path: '/who' }))).toMatchObject({
        server: 'a',
        host,
      })
    }
    const shared = await send(proxyPort, { host: `sandbox.${DOMAIN}`, headers })
    expect(json(shared)).toMatchObject({ server: 'a', host: `${portA}-isbxa.${DOMAIN}` })
  })

  it('answers 502 JSON for an unknown sandbox', async () => {
    const answer = await send(proxyPort, { host: `${portA}-inope.${DOMAIN}` })
    expect(answer.status).toBe(502)
    expect(answer.body).toBe(
      '{"sandboxId":"inope","message":"The sandbox was not found","code":502}',
    )
  })

  it('answers a browser navigation with an HTML page of the same status', async () => {
    const answer = await send(proxyPort, {
      host: `${portA}-inope.${DOMAIN}`,
      headers: {
        'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0',
        accept: 'text/html',
      },
    })
    expect(answer.status).toBe(502)
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(answer.body).toContain('The sandbox was not found')
  })

  it('answers 502 JSON for a closed port', async () => {
    const port = await closedPort(ADDRESS_A)
    const answer = await send(proxyPort, { host: `${port}-isbxa.${DOMAIN}` })
    expect(answer.status).toBe(502)
    expect(json(answer)).toEqual({
      sandboxId: 'isbxa',
      message: 'The sandbox is running but port is not open',
      port,
      code: 502,
    })
  })

  it('answers 400 plain text for a bad host or a lone routing header', async () => {
    const bad = await send(proxyPort, { host: 'localhost' })
    expect([bad.status, bad.body]).toEqual([400, 'Invalid host\n'])
    const lone = await send(proxyPort, {
      host: 'localhost',
      headers: { 'E2b-Sandbox-Id': 'isbxa' },
    })
    expect([lone.status, lone.body]).toEqual([400, 'missing header\n'])
  })
})

/** A GET of `path` from sandbox `isbxa` through the proxy, sent. */
function getFromA(path: string): ClientRequest {
  const req = request({
    host: '127.0.0.1',
    port: proxyPort,
    path,
    headers: { host: `${portA}-isbxa.${DOMAIN}` },
  })
  req.end()
  return req
}

describe('streaming', () => {
  it('delivers the first chunk while the sandbox still holds the response open', async () => {
    const release = holdStream()
    const req = getFromA('/stream')
    const reader = (await responseTo(req))[Symbol.asyncIterator]()
    const first = await reader.next()
    expect(Buffer.from(first.value).toString()).toBe('first\n')
    release()
    const rest: string[] = []
    for (let next = await reader.next(); next.done !== true; next = await reader.next()) {
      rest.push(Buffer.from(next.value).toString())
    }
    expect(rest.join('')).toBe('last\n')
  })

  it("cuts the client's answer when the sandbox's side dies midway, and goes on serving", async () => {
    const req = getFromA('/cut')
    const answer = await responseTo(req)
    const received: string[] = []
    // A cut answer must not reach the client as a whole one.
    const outcome = await new Promise<string>((resolve) => {
      answer.on('data', (chunk: Buffer) => received.push(chunk.toString()))
      answer.on('end', () => resolve('ended'))
      answer.on('error', (error) => resolve(error.message))
    })
    expect([received.join(''), outcome]).toEqual(['first\n', 'aborted'])
    const next = await send(proxyPort, { host: `${portA}-isbxa.${DOMAIN}`, path: '/whoami' })
    expect(json(next)).toMatchObject({ server: 'a', path: '/whoami' })
  })

  it('closes the answer in the sandbox when the client goes away midway through it', async () => {
    const release = holdStream()
    const cut = nextStreamCut()
    const req = getFromA('/stream')
    const reader = (await responseTo(req))[Symbol.asyncIterator]()
    expect(Buffer.from((await reader.next()).value).toString()).toBe('first\n')
    req.destroy()
    // Settles only if the proxy ended its request to the sandbox too.
    await cut
    release()
  })

  it('streams a 200 MiB upload with bounded memory', async () => {
    const chunk = Buffer.alloc(1 << 20, 7)
    let sent = 0
    const total = 200
    const body = new Readable({
      read() {
        this.push(sent++ < total ? chunk : null)
      },
    })
    const before = process.memoryUsage().rss
    let peak = before
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
    }, 20)
    try {
      const answer = await send(
        proxyPort,
        { host: `${portA}-isbxa.${DOMAIN}`, method: 'POST', path: '/upload' },
        body,
      )
      expect(json(answer)).toEqual({ bytes: total * chunk.length })
    } finally {
      clearInterval(sampler)
    }
    // Buffering the body anywhere would cost at least its 200 MiB.
    expect(peak - before).toBeLessThan(100 * 1024 * 1024)
  })

  it('forwards a body that arrived whole with its length, for servers that read no chunks', async () => {
    const head = `POST /request HTTP/1.1\r\nhost: ${portA}-isbxa.${DOMAIN}\r\nconnection: close\r\n`
    const chunked = 'transfer-encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n'
    const answer = await sendRaw(proxyPort, head + chunked)
    const seen = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
    expect(seen.body).toBe('hello world')
    expect(seen.headers['content-length']).toBe('11')
    expect(seen.headers['transfer-encoding']).toBeUndefined()
  })

  // Node frames no body of its own for these methods: a streamed one must keep its chunks, or
  // the sandbox's server reads the body's bytes as a request of their own.
  for (const method of ['DELETE', 'OPTIONS', 'GET']) {
    it(`keeps the chunks of a ${method} body that is still arriving`, async () => {
      const head = `${method} /request HTTP/1.1\r\nhost: ${portA}-isbxa.${DOMAIN}\r\nconnection: close\r\n`
      const answer = await sendRaw(
        proxyPort,
        `${head}transfer-encoding: chunked\r\n\r\n5\r\nhello\r\n`,
        '6\r\n world\r\n0\r\n\r\n',
      )
      expect(answer).toMatch(/^HTTP\/1.1 200 /)
      const seen = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
      expect(seen.body).toBe('hello world')
    })
  }

  it('streams a request body and its response at the same time', async () => {
    const req = request({
      host: '127.0.0.1',
      port: proxyPort,
      method: 'POST',
      path: '/echo',
      headers: { host: `${portA}-isbxa.${DOMAIN}` },
    })
    req.flushHeaders()
    const reader = (await responseTo(req))[Symbol.asyncIterator]()
    // Each message goes out only after the previous one came back: neither side is buffered.
    for (const message of ['{"a":1}', '{"b":2}', '{"c":3}']) {
      req.write(message)
      const echoed = await reader.next()
      expect(Buffer.from(echoed.value).toString()).toBe(message)
    }
    req.end()
    expect((await reader.next()).done).toBe(true)
  })
})

describe('WebSocket', () => {
  it('tunnels an upgrade both ways', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${proxyPort}/chat`, {
      headers: { 'E2b-Sandbox-Id': 'isbxa', 'E2b-Sandbox-Port': String(portA) },
    })
    const messages: string[] = []
    let wake = (): void => {}
    socket.on('message', (data: Buffer) => {
      messages.push(data.toString())
      wake()
    })
    const until = async (count: number): Promise<void> => {
      while (messages.length < count) {
        await new Promise<void>((resolve, reject) => {
          wake = resolve
          socket.once('error', reject)
        })
      }
    }
    try {
      await until(1)
      expect(messages).toEqual(['hello /chat'])
      socket.send('ping')
      socket.send(Buffer.from('pong'))
      await until(3)
      expect(messages).toEqual(['hello /chat', 'ping', 'pong'])
    } finally {
      socket.terminate()
    }
  })

  it('answers a refused upgrade with the contract error', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${proxyPort}/`, {
      headers: { host: `${portA}-inope.${DOMAIN}` },
    })
    socket.on('error', () => {})
    const status = await new Promise<number | undefined>((resolve) => {
      socket.once('unexpected-response', (req, res) => {
        resolve(res.statusCode)
        req.destroy()
      })
    })
    expect(status).toBe(502)
  })
})

/**
 * Sends `parts` on a new connection, 50 ms apart (one part is one write, as a client whose
 * request fits one packet), and reads until the proxy closes.
 */
async function sendRaw(port: number, ...parts: string[]): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  for (const [index, part] of parts.entries()) {
    if (index > 0) await new Promise((resolve) => setTimeout(resolve, 50))
    socket.write(part)
  }
  const chunks: Buffer[] = []
  for await (const chunk of socket) chunks.push(chunk)
  return Buffer.concat(chunks).toString()
}
