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

/**
 * `data` sent and fetched whole through the global `fetch` over loopback HTTP, as the SDK's
 * `files.write` (one multipart part) and `files.read` (`format: 'bytes'`) move it, to a node
 * server that discards the upload and answers the download from memory: what the SDK's own
 * transport reaches with nothing behind it. The floor beside which the service's share of a
 * big transfer shows, in ms per transfer, warm-up runs dropped.
 */
export async function loopbackBulkTransfers(
  data: Buffer,
  runs: number,
  warmup: number,
): Promise<{ upload: number[]; download: number[] }> {
  const server = http.createServer((req, res) => {
    if (req.method === 'POST') {
      req.resume()
      req.on('end', () => res.end('[]'))
      return
    }
    res.setHeader('content-length', data.length)
    res.end(data)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP')
  const url = `http://127.0.0.1:${address.port}/`
  const payload = new Uint8Array(data).buffer
  try {
    const upload = await sampleMs(runs, warmup, async () => {
      const form = new FormData()
      form.append('file', new Blob([payload]), 'file')
      const response = await fetch(url, { method: 'POST', body: form })
      await response.arrayBuffer()
    })
    const download = await sampleMs(runs, warmup, async () => {
      const response = await fetch(url)
      const bytes = new Uint8Array(await response.arrayBuffer())
      if (bytes.length !== data.length) throw new Error(`fetched ${bytes.length} bytes`)
    })
    return { upload, download }
  } finally {
    server.closeAllConnections()
    server.close()
  }
}
