import { createServer, type Server } from 'node:http'
import { WebSocketServer } from 'ws'
import { listenOn, MapDirectory, startProxy, stopServer } from './proxy-fixture.js'

// Two "sandboxes" are servers on their own loopback addresses; the proxy reaches them only
// through the directory, as it reaches real sandboxes through the store.
export const ADDRESS_A = '127.0.0.2'
export const ADDRESS_B = '127.0.0.3'

let streamHeld = Promise.resolve()

/** Makes the next `/stream` answer wait after its first chunk until the returned release runs. */
export function holdStream(): () => void {
  let release: () => void = () => {}
  streamHeld = new Promise((resolve) => {
    release = resolve
  })
  return release
}

function upstream(name: string): Server {
  return createServer((req, res) => {
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.write('first\n')
      streamHeld.then(
        () => res.end('last\n'),
        () => res.destroy(),
      )
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
 * and `isbxb`, a directory naming them, and the proxy over it. `reset` restores the directory.
 */
export async function startWorld() {
  const a = upstream('a')
  const b = upstream('b')
  const portA = await listenOn(a, ADDRESS_A)
  const portB = await listenOn(b, ADDRESS_B)
  const wss = new WebSocketServer({ server: a })
  wss.on('connection', (socket, req) => {
    socket.send(`hello ${req.url ?? ''}`)
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
    },
    async stop(): Promise<void> {
      await proxy.close()
      for (const client of wss.clients) client.terminate()
      wss.close()
      await Promise.all([a, b].map(stopServer))
    },
  }
}
