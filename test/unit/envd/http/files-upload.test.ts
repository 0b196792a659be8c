import { randomBytes } from 'node:crypto'
import {
  chmod,
  chown,
  mkdir,
  readdir,
  readFile,
  readlink,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { gzipSync } from 'node:zlib'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readMetadata } from '../../../../src/envd/fs/xattr-metadata.js'
import {
  entriesOf,
  errorOf,
  type FileRoutesFixture,
  fileRoutesFixture,
  filesUrl,
  USER_UID,
} from './file-routes-fixture.js'

let fx: FileRoutesFixture
beforeEach(async () => {
  fx = await fileRoutesFixture()
})
afterEach(() => fx.cleanup())

function post(query: Record<string, string>, init: RequestInit) {
  return fx.request(filesUrl(query), { method: 'POST', ...init })
}

function form(...files: [string, string][]): FormData {
  const data = new FormData()
  for (const [filename, content] of files) data.append('file', new Blob([content]), filename)
  return data
}

const octet = { 'content-type': 'application/octet-stream' }

describe('POST /files, application/octet-stream', () => {
  it('writes the body to path, creating parents owned by the user', async () => {
    const response = await post({ path: 'a/b/c.txt' }, { headers: octet, body: 'raw body' })
    expect(response.status).toBe(200)
    const target = path.join(fx.userHome, 'a/b/c.txt')
    expect(await response.json()).toEqual([{ path: target, name: 'c.txt', type: 'file' }])
    expect(await readFile(target, 'utf8')).toBe('raw body')
    const info = await stat(target)
    expect([info.uid, info.gid, info.mode & 0o777]).toEqual([USER_UID, USER_UID, 0o644])
    const dir = await stat(path.join(fx.userHome, 'a/b'))
    expect([dir.uid, dir.mode & 0o777]).toEqual([USER_UID, 0o755])
  })

  it('decompresses a gzip body, and rejects a corrupt one without writing', async () => {
    const headers = { ...octet, 'content-encoding': 'gzip' }
    const ok = await post({ path: 'z.txt' }, { headers, body: gzipSync('zipped') })
    expect(ok.status).toBe(200)
    expect(await readFile(path.join(fx.userHome, 'z.txt'), 'utf8')).toBe('zipped')
    const corrupt = await post({ path: 'bad.txt' }, { headers, body: 'not gzip at all' })
    expect(corrupt.status).toBe(400)
    expect((await errorOf(corrupt)).message).toMatch(/^error decompressing request body/)
    expect(await readdir(fx.userHome)).toEqual(['z.txt'])
  })

  it('requires path', async () => {
    const response = await post({}, { headers: octet, body: 'x' })
    expect(response.status).toBe(400)
    expect((await errorOf(response)).message).toBe(
      'path query parameter is required for raw body upload',
    )
  })

  it('overwrites a file in place, keeping its mode, and replaces its metadata', async () => {
    const target = path.join(fx.userHome, 'run.sh')
    await writeFile(target, 'old')
    await chown(target, USER_UID, USER_UID)
    await chmod(target, 0o755)
    const first = await post(
      { path: 'run.sh' },
      { headers: { ...octet, 'X-Metadata-Author': 'mish', 'X-Metadata-Stage': 'one' }, body: 'v1' },
    )
    expect((await entriesOf(first))[0]?.metadata).toEqual({ author: 'mish', stage: 'one' })
    await post({ path: 'run.sh' }, { headers: { ...octet, 'X-Metadata-Stage': 'two' }, body: 'v2' })
    expect(await readFile(target, 'utf8')).toBe('v2')
    expect((await stat(target)).mode & 0o777).toBe(0o755)
    expect(await readMetadata(target)).toEqual({ stage: 'two' })
  })

  it('rejects invalid metadata before writing', async () => {
    const response = await post(
      { path: 'm.txt' },
      { headers: { ...octet, [`X-Metadata-${'k'.repeat(247)}`]: 'v' }, body: 'x' },
    )
    expect(response.status).toBe(400)
    expect(await readdir(fx.userHome)).toEqual([])
  })

  it('answers 400 for a directory path and for other content types', async () => {
    await mkdir(path.join(fx.userHome, 'dir'))
    const dir = await post({ path: 'dir' }, { headers: octet, body: 'x' })
    expect(dir.status).toBe(400)
    expect((await errorOf(dir)).message).toBe(
      `path '${path.join(fx.userHome, 'dir')}' is a directory`,
    )
    const text = await post(
      { path: 'x.txt' },
      { headers: { 'content-type': 'text/plain' }, body: 'x' },
    )
    expect(text.status).toBe(400)
    expect((await errorOf(text)).message).toMatch(/^unsupported content type: text\/plain/)
  })

  it('creates a new file for the user where only root may, but never overwrites root’s', async () => {
    const created = path.join(fx.root, 'etc/new/owned-by-user.txt')
    const response = await post({ path: created }, { headers: octet, body: 'mine' })
    expect(response.status).toBe(200)
    for (const entry of [created, path.dirname(created)]) {
      expect((await stat(entry)).uid).toBe(USER_UID)
    }
    const target = path.join(fx.root, 'etc/owned-by-root.txt')
    const allowed = await post({ path: target, username: 'root' }, { headers: octet, body: 'x' })
    expect(allowed.status).toBe(200)
    const denied = await post({ path: target }, { headers: octet, body: 'y' })
    expect(denied.status).toBe(403)
    expect((await errorOf(denied)).message).toBe(`permission denied: cannot write '${target}'`)
    expect(await readFile(target, 'utf8')).toBe('x')
    expect((await stat(target)).uid).toBe(0)
  })

  it('does not follow a symlink out of the user’s reach when creating as root', async () => {
    const rootHome = path.join(fx.root, 'root')
    await symlink(rootHome, path.join(fx.userHome, 'evil'))
    for (const requested of ['evil/x.txt', 'evil/sub/x.txt']) {
      const denied = await post({ path: requested }, { headers: octet, body: 'x' })
      expect(denied.status).toBe(403)
    }
    expect(await readdir(rootHome)).toEqual([])
  })
})

describe('POST /files, multipart/form-data', () => {
  it('writes the part to path when path is given', async () => {
    const response = await post({ path: 'one.txt' }, { body: form(['ignored.txt', 'content']) })
    expect(response.status).toBe(200)
    expect(await readFile(path.join(fx.userHome, 'one.txt'), 'utf8')).toBe('content')
  })

  it('uses each filename verbatim as the destination without path', async () => {
    const absolute = path.join(fx.userHome, 'abs/x.txt')
    const response = await post(
      {},
      { body: form(['rel/dir/ä.txt', 'relative'], [absolute, 'absolute'], ['~/t.txt', 'tilde']) },
    )
    expect(response.status).toBe(200)
    expect((await entriesOf(response)).map((e) => e.path)).toEqual([
      path.join(fx.userHome, 'rel/dir/ä.txt'),
      absolute,
      path.join(fx.userHome, 't.txt'),
    ])
    expect(await readFile(path.join(fx.userHome, 'rel/dir/ä.txt'), 'utf8')).toBe('relative')
    expect(await readFile(absolute, 'utf8')).toBe('absolute')
  })

  it('rejects two parts to one path, leaving nothing behind', async () => {
    const response = await post({}, { body: form(['new/d.txt', '1'], ['new/d.txt', '2']) })
    expect(response.status).toBe(400)
    expect((await errorOf(response)).message).toBe(
      `you cannot upload multiple files to the same path '${path.join(fx.userHome, 'new/d.txt')}' in one upload request`,
    )
    expect(await readdir(fx.userHome)).toEqual([])
  })

  it('applies the same metadata to every file', async () => {
    const response = await post(
      {},
      { headers: { 'X-Metadata-Source': 'suite' }, body: form(['m1.txt', '1'], ['m2.txt', '2']) },
    )
    const entries = await entriesOf(response)
    expect(entries.map((e) => e.metadata)).toEqual([{ source: 'suite' }, { source: 'suite' }])
    for (const entry of entries) expect(await readMetadata(entry.path)).toEqual({ source: 'suite' })
  })

  it('rejects a truncated multipart body without writing', async () => {
    const body =
      '--b\r\nContent-Disposition: form-data; name="file"; filename="t.txt"\r\n\r\npartial'
    const response = await post(
      {},
      { headers: { 'content-type': 'multipart/form-data; boundary=b' }, body },
    )
    expect(response.status).toBe(400)
    expect((await errorOf(response)).message).toMatch(/^error parsing multipart form/)
    expect(await readdir(fx.userHome)).toEqual([])
  })

  it('rejects a body cut short inside a skipped part, and keeps serving', async () => {
    const body =
      '--b\r\nContent-Disposition: form-data; name="other"; filename="o.txt"\r\n\r\npartial'
    const response = await post(
      {},
      { headers: { 'content-type': 'multipart/form-data; boundary=b' }, body },
    )
    expect(response.status).toBe(400)
    expect((await errorOf(response)).message).toBe(
      'error parsing multipart form: Unexpected end of form',
    )
    const next = await post({ path: 'after.txt' }, { body: form(['after.txt', 'ok']) })
    expect(next.status).toBe(200)
  })
})

describe('POST /files, a file part without a filename', () => {
  it('writes a string value to path, as a browser form sends it', async () => {
    const body = new FormData()
    body.append('file', 'from a string')
    const response = await post({ path: 'string.txt' }, { body })
    expect(response.status).toBe(200)
    expect(await readFile(path.join(fx.userHome, 'string.txt'), 'utf8')).toBe('from a string')
  })

  it('refuses one over 1 MiB with 400, writing nothing, and keeps serving', async () => {
    const body = new FormData()
    body.append('file', 'x'.repeat(1024 * 1024 + 1))
    const response = await post({ path: 'big.txt' }, { body })
    expect(response.status).toBe(400)
    expect((await errorOf(response)).message).toBe(
      'a file part without a filename is limited to 1 MiB',
    )
    expect(await readdir(fx.userHome)).toEqual([])
    const next = await post({ path: 'after.txt' }, { body: form(['after.txt', 'ok']) })
    expect(next.status).toBe(200)
  })
})

describe('POST /files, a refused part in a long multipart body', () => {
  it('answers 403 at once and keeps serving', async () => {
    const body = new FormData()
    // Root's existing file: the user may not overwrite it.
    body.append('file', new Blob(['x'.repeat(4 * 1024 * 1024)]), path.join(fx.root, 'etc/passwd'))
    body.append('file', new Blob(['later']), 'later.txt')
    const response = await post({}, { body })
    expect(response.status).toBe(403)
    expect(await readdir(fx.userHome)).toEqual([])
    const next = await post({ path: 'after.txt' }, { headers: octet, body: 'still up' })
    expect(next.status).toBe(200)
  })
})

describe('POST /files, small and large files', () => {
  // envd writes a file of up to 64 KiB in one call and streams a bigger one.
  const sizes = [0, 1, 64 * 1024, 64 * 1024 + 1, 3 * 1024 * 1024 + 7]

  it('writes each size whole, as a raw body and as a multipart part', async () => {
    for (const size of sizes) {
      const bytes = randomBytes(size)
      const raw = await post({ path: `raw-${size}` }, { headers: octet, body: bytes })
      expect(raw.status).toBe(200)
      const body = new FormData()
      body.append('file', new Blob([bytes]), `part-${size}`)
      const part = await post({}, { body })
      expect(part.status).toBe(200)
      for (const name of [`raw-${size}`, `part-${size}`]) {
        expect((await readFile(path.join(fx.userHome, name))).equals(bytes), name).toBe(true)
      }
    }
  })

  it('closes the file of an upload cut short, small or large, and leaves nothing behind', async () => {
    for (const content of ['partial', 'x'.repeat(512 * 1024)]) {
      const body = `--b\r\nContent-Disposition: form-data; name="file"; filename="cut.txt"\r\n\r\n${content}`
      const response = await post(
        {},
        { headers: { 'content-type': 'multipart/form-data; boundary=b' }, body },
      )
      expect(response.status).toBe(400)
      expect(await readdir(fx.userHome)).toEqual([])
      // A write stream closes its descriptor just after the reply: give it a moment.
      for (let tries = 0; tries < 50 && (await descriptorsUnder(fx.root)).length > 0; tries++) {
        await sleep(20)
      }
      expect(await descriptorsUnder(fx.root)).toEqual([])
    }
  })
})

/** This process's open descriptors on files under `dir`: envd's routes run in it. */
async function descriptorsUnder(dir: string): Promise<string[]> {
  const targets = await Promise.all(
    (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
  )
  return targets.filter((target) => target.startsWith(`${dir}/`))
}
