import { once } from 'node:events'
import http from 'node:http'
import { sampleMs } from '../stats.js'

/**
 * Round trips to a node HTTP server on 127.0.0.1 that answers at once, through the global
 * `fetch` (undici, keep-alive): the client stack the SDK uses, with nothing behind it. The
 * floor of any figure that is one request.
 */
export async function loopbackRoundTrips(count: number, warmup: number): Promise<number[]> {
  const server = http.createServer((_req, res) => res.end())
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP')
  const url = `http://127.0.0.1:${address.port}/`
  try {
    return await sampleMs(count, warmup, async () => {
      const response = await fetch(url, { method: 'POST', body: '{}' })
      await response.arrayBuffer()
    })
  } finally {
    server.closeAllConnections()
    server.close()
  }
}
