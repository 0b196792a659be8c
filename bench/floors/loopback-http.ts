import { once } from 'node:events'
import http from 'node:http'
import { sampleMs } from '../stats.js'

/**
 * Round trips to a node HTTP server on 127.0.0.1 that answers at once, through the global
 * `fetch` (undici, keep-alive): the client stack the SDK uses, with nothing behind it. The
 * floor of any figure that is one request.
 */
export function loopbackRoundTrips(count: number, warmup: number): Promise<number[]> {
  return withLoopbackServer(
    (_req, res) => res.end(),
    (url) =>
      sampleMs(count, warmup, async () => {
        const response = await fetch(url, { method: 'POST', body: '{}' })
        await response.arrayBuffer()
      }),
  )
}

/**
 * `data` sent and fetched whole through the global `fetch` over loopback HTTP, as the SDK's
 * `files.write` (one multipart part) and `files.read` (`format: 'bytes'`) move it, to a node
 * server that discards the upload and answers the download from memory: what the SDK's own
 * transport reaches with nothing behind it. The floor beside which the service's share of a
 * big transfer shows, in ms per transfer, warm-up runs dropped.
 */
export function loopbackBulkTransfers(
  data: Buffer,
  runs: number,
  warmup: number,
): Promise<{ upload: number[]; download: number[] }> {
  const payload = new Uint8Array(data).buffer
  const serve: http.RequestListener = (req, res) => {
    if (req.method === 'POST') {
      req.resume()
      req.on('end', () => res.end('[]'))
      return
    }
    res.setHeader('content-length', data.length)
    res.end(data)
  }
  return withLoopbackServer(serve, async (url) => {
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
  })
}

/** Runs `use` with the URL of a node HTTP server on 127.0.0.1 that `serve` answers, then closes it. */
async function withLoopbackServer<T>(
  serve: http.RequestListener,
  use: (url: string) => Promise<T>,
): Promise<T> {
  const server = http.createServer(serve)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  try {
    const address = server.address()
    if (address === null || typeof address === 'string') throw new Error('not listening on TCP')
    return await use(`http://127.0.0.1:${address.port}/`)
  } finally {
    server.closeAllConnections()
    server.close()
  }
}
