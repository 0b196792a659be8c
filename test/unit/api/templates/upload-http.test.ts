import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getRequestListener } from '@hono/node-server'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type TemplateApp, templateApp, UPLOAD_CAP } from './template-app.js'

let t: TemplateApp
let server: Server
let origin: string

beforeEach(async () => {
  t = await templateApp()
  server = createServer(getRequestListener(t.app.fetch))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterEach(async () => {
  await new Promise((resolve) => server.close(resolve))
  await t.close()
})

/** A PUT over real HTTP, as the SDK sends it, with or without a Content-Length. */
function put(url: string, body: Buffer, contentLength: boolean) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(url, {
      method: 'PUT',
      headers: contentLength ? { 'Content-Length': body.length } : {},
    })
    req.on('response', (res) => {
      const parts: Buffer[] = []
      res.on('data', (part: Buffer) => parts.push(part))
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString() }),
      )
    })
    req.on('error', reject)
    // Written before the end and without a Content-Length, the body goes chunked.
    req.write(body)
    req.end()
  })
}

describe('the upload over HTTP', () => {
  it('gets a URL at the server’s own address, refuses chunked and stores an exact body', async () => {
    const registered = await (await t.call('POST', '/v3/templates', { name: 'app' })).json()
    const hash = 'd'.repeat(64)
    const linkResponse = await fetch(`${origin}/templates/${registered.templateID}/files/${hash}`, {
      headers: { 'X-API-Key': t.key },
    })
    expect(linkResponse.status).toBe(201)
    const { url } = (await linkResponse.json()) as { url: string }
    expect(url.startsWith(`${origin}/`)).toBe(true)
    // Past the API's 1 MiB body limit, within the fixture's upload cap.
    const archive = Buffer.alloc(UPLOAD_CAP - 1, 7)
    // Small: a refusal answered before a large body is read ends in a reset, not a reply.
    const chunked = await put(url, Buffer.from('small'), false)
    expect(chunked.status).toBe(411)
    expect(await t.builder.files.has(registered.templateID, hash)).toBe(false)
    expect((await put(url, archive, true)).status).toBe(200)
    expect(await t.builder.files.has(registered.templateID, hash)).toBe(true)
  })
})
