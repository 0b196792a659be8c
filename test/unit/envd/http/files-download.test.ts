import { randomBytes } from 'node:crypto'
import { mkdir, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  errorOf,
  type FileRoutesFixture,
  fileRoutesFixture,
  filesUrl,
} from './file-routes-fixture.js'

let fx: FileRoutesFixture
beforeEach(async () => {
  fx = await fileRoutesFixture()
  await writeFile(path.join(fx.userHome, 'hello.txt'), 'Hello, world!')
})
afterEach(() => fx.cleanup())

function get(query: Record<string, string>, headers: Record<string, string> = {}) {
  return fx.request(filesUrl(query), { headers })
}

describe('GET /files', () => {
  it('streams a file relative to the default user home, identity by default', async () => {
    const response = await get({ path: 'hello.txt' })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/octet-stream')
    expect(response.headers.get('content-disposition')).toBe('inline; filename=hello.txt')
    expect(response.headers.get('content-length')).toBe('13')
    expect(response.headers.get('vary')).toBe('Accept-Encoding')
    expect(response.headers.get('last-modified')).toMatch(/GMT$/)
    expect(await response.text()).toBe('Hello, world!')
  })

  it('serves every byte of files read whole and streamed, empty ones and long ranges', async () => {
    // envd reads up to 64 KiB at once and streams more; each side of that, and 1 MiB chunks.
    for (const size of [0, 1, 64 * 1024, 64 * 1024 + 1, 3 * 1024 * 1024 + 7]) {
      const bytes = randomBytes(size)
      await writeFile(path.join(fx.userHome, 'sized.bin'), bytes)
      const whole = await get({ path: 'sized.bin' })
      expect(whole.status).toBe(200)
      expect(whole.headers.get('content-length')).toBe(String(size))
      expect(Buffer.from(await whole.arrayBuffer()).equals(bytes)).toBe(true)
      const zipped = await get({ path: 'sized.bin' }, { 'accept-encoding': 'gzip' })
      expect(gunzipSync(Buffer.from(await zipped.arrayBuffer())).equals(bytes)).toBe(true)
    }
    const bytes = randomBytes(200 * 1024)
    await writeFile(path.join(fx.userHome, 'ranged.bin'), bytes)
    for (const [start, end] of [
      [10, 20],
      [1000, 1000 + 64 * 1024],
      [5, 200 * 1024 - 1],
    ] as const) {
      const ranged = await get({ path: 'ranged.bin' }, { range: `bytes=${start}-${end}` })
      expect(ranged.status).toBe(206)
      expect(ranged.headers.get('content-length')).toBe(String(end - start + 1))
      const body = Buffer.from(await ranged.arrayBuffer())
      expect(body.equals(bytes.subarray(start, end + 1))).toBe(true)
    }
  })

  it('answers HEAD with the headers of GET and no body', async () => {
    const response = await fx.request(filesUrl({ path: 'hello.txt' }), { method: 'HEAD' })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-length')).toBe('13')
    expect(response.headers.get('content-type')).toBe('application/octet-stream')
    expect(await response.text()).toBe('')
  })

  it('gzips when the client asks for gzip', async () => {
    const response = await get({ path: 'hello.txt' }, { 'accept-encoding': 'gzip' })
    expect(response.headers.get('content-encoding')).toBe('gzip')
    expect(response.headers.get('content-length')).toBeNull()
    const body = Buffer.from(await response.arrayBuffer())
    expect(gunzipSync(body).toString()).toBe('Hello, world!')
  })

  it('answers 406 when identity is refused and nothing else is acceptable', async () => {
    const response = await get({ path: 'hello.txt' }, { 'accept-encoding': 'br, identity;q=0' })
    expect(response.status).toBe(406)
    expect(await response.json()).toEqual({
      code: 406,
      message: 'no acceptable encoding found, supported: [identity, gzip]',
    })
  })

  it('serves a single range uncompressed, and 416 past the end', async () => {
    const ranged = await get(
      { path: 'hello.txt' },
      { range: 'bytes=7-11', 'accept-encoding': 'gzip' },
    )
    expect(ranged.status).toBe(206)
    expect(ranged.headers.get('content-encoding')).toBeNull()
    expect(ranged.headers.get('content-range')).toBe('bytes 7-11/13')
    expect(await ranged.text()).toBe('world')
    const beyond = await get({ path: 'hello.txt' }, { range: 'bytes=50-' })
    expect(beyond.status).toBe(416)
    expect(beyond.headers.get('content-range')).toBe('bytes */13')
  })

  it('answers 304 to If-Modified-Since at or after the modification time', async () => {
    const file = path.join(fx.userHome, 'hello.txt')
    await utimes(file, new Date('2024-01-01T00:00:00Z'), new Date('2024-01-01T00:00:00Z'))
    const fresh = await get(
      { path: 'hello.txt' },
      { 'if-modified-since': 'Mon, 01 Jan 2024 00:00:00 GMT' },
    )
    expect(fresh.status).toBe(304)
    const stale = await get(
      { path: 'hello.txt' },
      { 'if-modified-since': 'Sun, 31 Dec 2023 00:00:00 GMT' },
    )
    expect(stale.status).toBe(200)
    expect(await stale.text()).toBe('Hello, world!')
  })

  it('encodes a non-ASCII name per RFC 5987', async () => {
    await writeFile(path.join(fx.userHome, 'résumé.txt'), 'cv')
    const response = await get({ path: 'résumé.txt' })
    expect(response.headers.get('content-disposition')).toBe(
      "inline; filename*=utf-8''r%C3%A9sum%C3%A9.txt",
    )
    expect(await response.text()).toBe('cv')
  })

  it('resolves ~ and absolute paths, and reads as another user', async () => {
    expect(await (await get({ path: '~/hello.txt' })).text()).toBe('Hello, world!')
    const absolute = path.join(fx.userHome, 'hello.txt')
    expect(await (await get({ path: absolute, username: 'root' })).text()).toBe('Hello, world!')
  })

  it('answers 404 for a missing file and 400 for a directory', async () => {
    const missing = await get({ path: 'nope.txt' })
    expect(missing.status).toBe(404)
    expect(await missing.json()).toEqual({
      code: 404,
      message: `path '${path.join(fx.userHome, 'nope.txt')}' does not exist`,
    })
    await mkdir(path.join(fx.userHome, 'dir'))
    const dir = await get({ path: 'dir' })
    expect(dir.status).toBe(400)
    expect((await errorOf(dir)).message).toBe(
      `path '${path.join(fx.userHome, 'dir')}' is a directory`,
    )
  })

  it('answers 403 when the user may not read the file', async () => {
    await mkdir(path.join(fx.root, 'root/secret'), { recursive: true })
    await writeFile(path.join(fx.root, 'root/secret/key'), 'k', { mode: 0o600 })
    const response = await get({ path: path.join(fx.root, 'root/secret/key') })
    expect(response.status).toBe(403)
    expect((await errorOf(response)).message).toMatch(/^permission denied: cannot read/)
  })

  it('answers 401 for an unknown user', async () => {
    const response = await get({ path: 'hello.txt', username: 'ghost' })
    expect(response.status).toBe(401)
    expect(await response.json()).toEqual({
      code: 401,
      message: "error looking up user 'ghost': user: unknown user ghost",
    })
  })
})
