import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { coalesceWrites } from '../../../src/proxy/coalesce-writes.js'

describe('coalesceWrites', () => {
  it('sends what the source delivers in one turn, status line included, as one write', async () => {
    // Counts the writes the answer's connection hands to the kernel.
    let writes = 0
    const server = createServer((_req, res) => {
      const connection = res.socket as unknown as Record<string, (...args: unknown[]) => void>
      for (const method of ['_write', '_writev']) {
        const write = connection[method]?.bind(connection)
        connection[method] = (...args: unknown[]) => {
          writes++
          write?.(...args)
        }
      }
      const source = new PassThrough()
      coalesceWrites(source, res)
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.flushHeaders()
      source.pipe(res)
      source.write('first ')
      source.write('second ')
      // A later delivery, and the end that comes with it, make one more write.
      setTimeout(() => source.end('last'), 50)
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    try {
      const { port } = server.address() as AddressInfo
      const response = await fetch(`http://127.0.0.1:${port}/`)
      expect(await response.text()).toBe('first second last')
      expect(writes).toBe(2)
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})
