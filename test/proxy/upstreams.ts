import { createServer, type Server } from 'node:http'
import { pino } from 'pino'
import { WebSocketServer } from 'ws'
import { startEnvd } from '../../src/envd/index.js'
import { listenOn, MapDirectory, startProxy, stopServer } from './proxy-fixture.js'

// Two "sandboxes" are servers on their own loopback addresses; the proxy reaches them only
// through the directory, as it reaches real sandboxes through the store.
export const ADDRESS_A = '127.0.0.2'
export const ADDRESS_B = '127.0.0.3'
/** A sandbox whose envd port (49983) is served by envd itself, with no access token set. */
export const ADDRESS_ENVD = '127.0.9.83'
/** A sandbox whose envd port is a server echoing what it was sent, headers included. */
export const ADDRESS_ECHO_ENVD = '127.0.9.84'
const ENVD_PORT = 49983

let streamHeld = Promise.resolve()

/** Makes the next `/stream` answer wait after its first chunk until the returned release runs. */
export function holdStream(): () => void {
  let release: () => void = () => {}
  streamHeld = new Promise((resolve) => {
    release = resolve
  })
  return release
}

let streamCut: () => void = () => {}

/** Settles once the next `/stream` answer closes before its end: its client went away. */
export function nextStreamCut(): Promise<void> {
  return new Promise((resolve) => {
    streamCut = resolve
  })
}

function upstream(name: string): Server {
  return createServer((req, res) => {
    if (req.url === '/stream') {
      res.once('close', () => {
        if (!res.writableFinished) streamCut()
      })
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.write('first\n')
      streamHeld.then(
        () => res.end('last\n'),
        () => res.destroy(),
      )
      return
    }
    if (req.url === '/cut') {
      // The sandbox's side of the connection dies midway through a streamed answer.
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.write('first\n', () => res.socket?.destroy())
      return
    }
    if (req.url === '/upload') {
      let bytes = 0
      req.on('data', (chunk: Buffer) => {
        bytes += chunk.length
      })
      req.on('end', () => res.end(JSON.stringify({ bytes })))
      return
    }
    if (req.url === '/headers') {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify(req.headers))
      return
    }
    if (req.url === '/request') {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify({ headers: req.headers, body: Buffer.concat(chunks).toString() }))
      })
      return
    }
    if (req.url === '/echo') {
      res.writeHead(200, { 'content-type': 'application/connect+json' })
      res.flushHeaders()
      req.on('data', (chunk: Buffer) => res.write(chunk))
      req.on('end', () => res.end())
      return
    }
    res.setHeader('content-type', 'application/json')
    res.end(
      JSON.stringify({
        server: name,
        host: req.headers.host,
        path: req.url,
        xff: req.headers['x-forwarded-for'],
      }),
    )
  })
}

/**
 * The world each proxy test file runs in: upstream "sandboxes" `isbxa` (with a WebSocket echo)
 * and `isbxb`, `isbxe` whose envd port is a real envd and `isbxh` whose envd port echoes, a
 * directory naming them, and the proxy over it. `reset` restores the directory.
 */
export async function startWorld() {
  const a = upstream('a')
  const b = upstream('b')
  const echoEnvd = upstream('echo-envd')
  const portA = await listenOn(a, ADDRESS_A)
  const portB = await listenOn(b, ADDRESS_B)
  await new Promise<void>((resolve) => echoEnvd.listen(ENVD_PORT, ADDRESS_ECHO_ENVD, resolve))
  const envd = await startEnvd({
    port: ENVD_PORT,
    host: ADDRESS_ENVD,
    logger: pino({ level: 'silent' }),
  })
  const wss = new WebSocketServer({ server: a })
  wss.on('connection', (socket, req) => {
    socket.send(req.url === '/headers' ? JSON.stringify(req.headers) : `hello ${req.url ?? ''}`)
    socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }))
  })
  const directory = new MapDirectory()
  const { proxy, port: proxyPort } = await startProxy(directory)
  return {
    directory,
    proxyPort,
    portA,
    portB,
    reset(): void {
      directory.sandboxes.clear()
      directory.resumeCalls = 0
      const running = { state: 'running' as const, autoResume: false }
      directory.sandboxes.set('isbxa', { ...running, sandboxID: 'isbxa', address: ADDRESS_A })
      directory.sandboxes.set('isbxb', { ...running, sandboxID: 'isbxb', address: ADDRESS_B })
      directory.sandboxes.set('isbxe', { ...running, sandboxID: 'isbxe', address: ADDRESS_ENVD })
      directory.sandboxes.set('isbxh', {
        ...running,
        sandboxID: 'isbxh',
        address: ADDRESS_ECHO_ENVD,
      })
    },
    async stop(): Promise<void> {
      await proxy.close()
      for (const client of wss.clients) client.terminate()
      wss.close()
      await Promise.all([a, b, echoEnvd].map(stopServer))
      await envd.close()
    },
  }
}
