import { access, mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  errorOf,
  type FileRoutesFixture,
  fileRoutesFixture,
  USER_UID,
} from './file-routes-fixture.js'

let fx: FileRoutesFixture
beforeEach(async () => {
  fx = await fileRoutesFixture()
  await writeFile(path.join(fx.userHome, 'p1'), 'Hello, ')
  await writeFile(path.join(fx.userHome, 'p2'), 'world!')
})
afterEach(() => fx.cleanup())

function compose(body: unknown) {
  return fx.request('http://envd/files/compose', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  )

describe('POST /files/compose', () => {
  it('concatenates the sources in order into a new file and deletes them', async () => {
    const response = await compose({ source_paths: ['p1', 'p2'], destination: 'out/joined.txt' })
    expect(response.status).toBe(200)
    const target = path.join(fx.userHome, 'out/joined.txt')
    expect(await response.json()).toEqual({ path: target, name: 'joined.txt', type: 'file' })
    expect(await readFile(target, 'utf8')).toBe('Hello, world!')
    expect((await stat(target)).uid).toBe(USER_UID)
    expect(await exists(path.join(fx.userHome, 'p1'))).toBe(false)
    expect(await exists(path.join(fx.userHome, 'p2'))).toBe(false)
  })

  it('answers 404 for a missing source and changes nothing', async () => {
    const response = await compose({ source_paths: ['p1', 'gone'], destination: 'out.txt' })
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({ code: 404, message: 'source file not found: gone' })
    expect(await exists(path.join(fx.userHome, 'p1'))).toBe(true)
    expect(await exists(path.join(fx.userHome, 'out.txt'))).toBe(false)
  })

  it('answers 400 for bad JSON, a bad schema, a directory source or the destination as source', async () => {
    expect((await compose('{')).status).toBe(400)
    const empty = await compose({ source_paths: [], destination: 'x' })
    expect(empty.status).toBe(400)
    expect((await errorOf(empty)).message).toMatch(/source_paths must not be empty/)
    expect((await compose({ source_paths: ['p1'] })).status).toBe(400)
    await mkdir(path.join(fx.userHome, 'dir'))
    expect((await compose({ source_paths: ['dir'], destination: 'x' })).status).toBe(400)
    expect((await compose({ source_paths: ['p1'], destination: 'p1' })).status).toBe(400)
  })

  it('acts for the named user: 401 when unknown, 403 when not permitted', async () => {
    const unknown = await compose({ source_paths: ['p1'], destination: 'x', username: 'ghost' })
    expect(unknown.status).toBe(401)
    const denied = await compose({
      source_paths: ['p1'],
      // Root's existing file: the user may not overwrite it.
      destination: path.join(fx.root, 'etc/passwd'),
    })
    expect(denied.status).toBe(403)
    expect(await exists(path.join(fx.userHome, 'p1'))).toBe(true)
  })
})
