import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type TemplateApp, templateApp, UPLOAD_CAP } from './template-app.js'

let t: TemplateApp
let templateID: string
const hash = 'a'.repeat(64)

beforeEach(async () => {
  t = await templateApp()
  const response = await t.call('POST', '/v3/templates', { name: 'app' })
  templateID = (await response.json()).templateID
})
afterEach(async () => {
  vi.useRealTimers()
  await t.close()
})

async function link(headers: Record<string, string> = {}, fileHash = hash) {
  const response = await t.call(
    'GET',
    `/templates/${templateID}/files/${fileHash}`,
    undefined,
    headers,
  )
  return { status: response.status, body: await response.json() }
}

/** A PUT to the upload URL as the SDK sends it: no API key, an exact Content-Length. */
function put(url: string, body: string, headers: Record<string, string> = {}) {
  const { pathname, search } = new URL(url)
  return t.request(`${pathname}${search}`, {
    method: 'PUT',
    headers: { 'Content-Length': String(Buffer.byteLength(body)), ...headers },
    body,
  })
}

describe('GET /templates/{t}/files/{hash}', () => {
  it('answers 201 with present false and a signed URL at the origin the client used', async () => {
    const direct = await link({ Host: '127.0.0.1:3000' })
    expect(direct.status).toBe(201)
    expect(direct.body.present).toBe(false)
    const url = new URL(direct.body.url)
    expect(url.origin).toBe('http://127.0.0.1:3000')
    expect(url.pathname).toBe(`/templates/${templateID}/files/${hash}`)
    const expires = Number(url.searchParams.get('expires'))
    expect(expires * 1000 - Date.now()).toBeGreaterThan(29 * 60 * 1000)
    expect(expires * 1000 - Date.now()).toBeLessThanOrEqual(30 * 60 * 1000)
    expect(url.searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/)
    const proxied = await link({ Host: 'api.sandbar.test', 'X-Forwarded-Proto': 'https' })
    expect(new URL(proxied.body.url).origin).toBe('https://api.sandbar.test')
  })

  it('refuses a hash that is not SHA-256 hex, and unknown templates', async () => {
    expect(await link({}, 'A'.repeat(64))).toEqual({
      status: 400,
      body: { code: 400, message: 'Invalid files hash' },
    })
    expect((await link({}, 'abc')).status).toBe(400)
    const response = await t.call('GET', `/templates/nosuchtemplate/files/${hash}`)
    expect(await response.json()).toEqual({
      code: 404,
      message: "Template 'nosuchtemplate' not found",
    })
  })
})

describe('the signed upload', () => {
  it('stores the archive without the API key, 0600, and then the link says present', async () => {
    const { body } = await link()
    const response = await put(body.url, 'archive bytes')
    expect(response.status).toBe(200)
    const file = path.join(t.filesDir, templateID, hash)
    expect(await readFile(file, 'utf8')).toBe('archive bytes')
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect((await link()).body.present).toBe(true)
  })

  it('refuses a changed signature, another hash, and an expired URL', async () => {
    const { body } = await link()
    const forged = new URL(body.url)
    forged.searchParams.set('signature', '0'.repeat(64))
    expect((await put(forged.toString(), 'x')).status).toBe(403)
    const otherHash = body.url.replace(hash, 'b'.repeat(64))
    expect((await put(otherHash, 'x')).status).toBe(403)
    const later = new URL(body.url)
    later.searchParams.set('expires', String(Number(later.searchParams.get('expires')) + 60))
    expect((await put(later.toString(), 'x')).status).toBe(403)
    const unsigned = new URL(body.url)
    unsigned.search = ''
    expect((await put(unsigned.toString(), 'x')).status).toBe(403)
  })

  it('refuses the URL 30 minutes after it was handed out', async () => {
    const { body } = await link()
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 30 * 60 * 1000 + 2000)
    const response = await put(body.url, 'x')
    expect(await response.json()).toEqual({
      code: 403,
      message: 'the upload URL has expired: ask GET /templates/{id}/files/{hash} for a new one',
    })
  })

  it('needs an exact Content-Length: none, chunked, or a body of another length are refused', async () => {
    const { body } = await link()
    const { pathname, search } = new URL(body.url)
    const chunked = await t.request(`${pathname}${search}`, {
      method: 'PUT',
      headers: { 'Transfer-Encoding': 'chunked' },
      body: 'abc',
    })
    expect(await chunked.json()).toEqual({
      code: 411,
      message: 'an upload needs an exact Content-Length; chunked uploads are refused',
    })
    const short = await put(body.url, 'abc', { 'Content-Length': '10' })
    expect(short.status).toBe(400)
    expect((await short.json()).message).toBe(
      'upload refused: the body ended after 3 of its 10 bytes',
    )
    expect((await link()).body.present).toBe(false)
  })

  it('takes bodies over the API’s 1 MiB limit up to its own cap, and refuses more', async () => {
    const { body } = await link()
    const tooLarge = await put(body.url, 'x', { 'Content-Length': String(UPLOAD_CAP + 1) })
    expect(await tooLarge.json()).toEqual({
      code: 413,
      message: `an upload may be at most ${UPLOAD_CAP} bytes`,
    })
    const atCap = await put(body.url, 'x'.repeat(UPLOAD_CAP))
    expect(atCap.status).toBe(200)
  })
})
