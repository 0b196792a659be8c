import { execFile } from 'node:child_process'
import { mkdir, readdir, readFile, rm, rmdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import {
  AuthenticationError,
  Volume,
  VolumeError,
  VolumeNotFoundError,
  VolumePathNotFoundError,
} from 'e2b'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// Volumes through the SDK's own `Volume` against `sandbar serve` (wave2-contracts §2): the
// control plane with the API key, the content API with the volume's token. Tokens live
// TOKEN_TTL seconds here, so one minted at the start has expired by the last test.

const TOKEN_TTL = 12
const run = promisify(execFile)
let serve: ServeInstance
/** A volume and its token, minted when the file started. */
let early: Volume
const opts = () => ({ ...serve.client })
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

beforeAll(async () => {
  serve = await startServe(['--volume-token-ttl', String(TOKEN_TTL), '--volume-size-mb', '64'])
  // The content API is the API itself; the SDK finds it by this variable (§2.3).
  process.env.E2B_VOLUME_API_URL = serve.client.apiUrl
  early = await Volume.create('early', opts())
})

afterAll(async () => {
  delete process.env.E2B_VOLUME_API_URL
  expect(await serve?.stop()).toEqual([])
})

/** The error a call rejects with; fails the test if it resolves. */
async function rejection(call: Promise<unknown>): Promise<Error> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  )
  if (!('error' in outcome)) throw new Error(`expected a rejection, got ${String(outcome.value)}`)
  if (!(outcome.error instanceof Error)) throw new Error(`not an Error: ${String(outcome.error)}`)
  return outcome.error
}

/** The volume's directory on the host, as the agent mounts it. */
const hostDir = (volume: Volume) => path.join(serve.dataDir, 'volumes', volume.volumeId)

describe('the control plane', () => {
  it('creates, lists, connects, gets and destroys volumes of the team', async () => {
    const created = await Volume.create('data-1', opts())
    expect(created.volumeId).toMatch(UUID)
    expect(created.name).toBe('data-1')
    const claims = decodeJwt(created.token)
    expect(claims).toMatchObject({
      aud: `https://api.${serve.client.domain}`,
      sub: expect.any(String),
      teamid: claims.sub,
      volid: created.volumeId,
      voltype: 'local',
      iss: 'sandbar',
    })
    expect(Number(claims.exp) - Number(claims.iat)).toBe(TOKEN_TTL)
    expect(claims.nbf).toBe(claims.iat)
    expect(claims.jti).toMatch(UUID)
    const header = decodeProtectedHeader(created.token)
    expect(header).toMatchObject({ alg: 'HS256', kid: expect.any(String) })
    expect(header.tokid).toBe(header.kid)

    expect(await Volume.list(opts())).toEqual(
      expect.arrayContaining([{ volumeId: created.volumeId, name: 'data-1' }]),
    )
    const connected = await Volume.connect(created.volumeId, opts())
    expect(connected.name).toBe('data-1')
    // A fresh token on every GET.
    expect(connected.token).not.toBe(created.token)
    expect(await Volume.getInfo(created.volumeId, opts())).toMatchObject({
      volumeId: created.volumeId,
      name: 'data-1',
    })
    // Sandbar's extra fields: the size limit and what is used.
    const raw = await callApi(serve.client, 'GET', `/volumes/${created.volumeId}`)
    expect(raw).toMatchObject({ status: 200, body: { sizeMB: 64, usedMB: expect.any(Number) } })

    expect(await Volume.destroy(created.volumeId, opts())).toBe(true)
    expect(await Volume.destroy(created.volumeId, opts())).toBe(false)
    expect(await Volume.destroy('non-existent-id', opts())).toBe(false)
    const gone = await rejection(Volume.getInfo(created.volumeId, opts()))
    expect(gone).toBeInstanceOf(VolumeNotFoundError)
    expect(gone.message).toBe(`Volume ${created.volumeId} not found`)
    expect(await rejection(Volume.connect('not-a-uuid', opts()))).toBeInstanceOf(
      VolumeNotFoundError,
    )
    expect((await Volume.list(opts())).map((v) => v.volumeId)).not.toContain(created.volumeId)
    // The name is free at once; the data goes as no sandbox mounts it.
    const again = await Volume.create('data-1', opts())
    expect(again.volumeId).not.toBe(created.volumeId)
    await expect
      .poll(() =>
        readFile(`${hostDir(created)}.img`).then(
          () => 'there',
          () => 'removed',
        ),
      )
      .toBe('removed')
    await Volume.destroy(again.volumeId, opts())
  })

  it('refuses bad names, taken names and sizes with the contract texts', async () => {
    for (const name of ['has space', 'dot.name', '', 'slash/name']) {
      const error = await rejection(Volume.create(name, opts()))
      expect(error).toBeInstanceOf(VolumeError)
      expect(error.message).toBe('400: Invalid volume name')
    }
    const taken = await rejection(Volume.create('early', opts()))
    expect(taken.message).toBe("400: Volume with name 'early' already exists")
    for (const sizeMB of [8, 1.5, 2 ** 30]) {
      expect(await callApi(serve.client, 'POST', '/volumes', { name: 'sized', sizeMB })).toEqual({
        status: 400,
        body: { code: 400, message: 'sizeMB must be a whole number from 16 to 1048576' },
      })
    }
    expect((await fetch(`${serve.client.apiUrl}/volumes`)).status).toBe(401)
  })
})

describe('the content API', () => {
  it('writes and reads files in every format, empty ones included', async () => {
    const volume = await Volume.connect(early.volumeId, opts())
    const info = await volume.writeFile('/hello.txt', 'hello volume')
    expect(info).toMatchObject({
      name: 'hello.txt',
      type: 'file',
      path: '/hello.txt',
      size: 12,
      mode: 0o666,
      uid: 9090,
      gid: 9090,
    })
    expect(info.mtime).toBeInstanceOf(Date)
    expect(await volume.readFile('/hello.txt')).toBe('hello volume')
    expect(new TextDecoder().decode(await volume.readFile('/hello.txt', { format: 'bytes' }))).toBe(
      'hello volume',
    )
    expect(await (await volume.readFile('/hello.txt', { format: 'blob' })).text()).toBe(
      'hello volume',
    )
    const stream = await volume.readFile('/hello.txt', { format: 'stream' })
    expect(await new Response(stream).text()).toBe('hello volume')

    const binary = Uint8Array.from({ length: 256 }, (_, i) => i)
    await volume.writeFile('/bin/all-bytes', binary.buffer, { force: true })
    expect(await volume.readFile('/bin/all-bytes', { format: 'bytes' })).toEqual(binary)
    await volume.writeFile('/blob', new Blob(['from a blob']))
    expect(await volume.readFile('/blob')).toBe('from a blob')
    const streamed = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('streamed '))
        controller.enqueue(new TextEncoder().encode('upload'))
        controller.close()
      },
    })
    await volume.writeFile('/streamed', streamed)
    expect(await volume.readFile('/streamed')).toBe('streamed upload')
    await volume.writeFile('/empty', '')
    expect(await volume.readFile('/empty')).toBe('')
    expect(await volume.readFile('/empty', { format: 'bytes' })).toEqual(new Uint8Array())
    // What the content API wrote is the volume's data on the host.
    expect(await readFile(path.join(hostDir(volume), 'hello.txt'), 'utf8')).toBe('hello volume')
  })

  it('creates exclusively without force and overwrites with it', async () => {
    const volume = await Volume.connect(early.volumeId, opts())
    await volume.writeFile('/once', 'first', { uid: 1000, gid: 1000, mode: 0o600 })
    const exists = await rejection(volume.writeFile('/once', 'second', { force: false }))
    expect(exists).toBeInstanceOf(VolumeError)
    expect(exists.message).toBe('409: "/once" already exists')
    const overwritten = await volume.writeFile('/once', 'second', { force: true })
    expect(overwritten).toMatchObject({ size: 6, uid: 1000, gid: 1000, mode: 0o600 })
    expect(await volume.readFile('/once')).toBe('second')
    const missingParent = await rejection(volume.writeFile('/no/parent', 'x'))
    expect(missingParent).toBeInstanceOf(VolumePathNotFoundError)
    await volume.writeFile('/made/parents/file', 'x', { force: true, uid: 7, gid: 8 })
    expect(await volume.getInfo('/made/parents')).toMatchObject({
      type: 'directory',
      uid: 7,
      gid: 8,
      mode: 0o777,
    })
  })

  it('makes directories, lists them to a depth, and tells what exists', async () => {
    const volume = await Volume.connect(early.volumeId, opts())
    const dir = await volume.makeDir('/tree', { mode: 0o750, uid: 1, gid: 2 })
    expect(dir).toMatchObject({ name: 'tree', type: 'directory', mode: 0o750, uid: 1, gid: 2 })
    const existing = await rejection(volume.makeDir('/tree'))
    expect(existing.message).toBe('409: "/tree" already exists')
    expect(await volume.makeDir('/tree', { force: true })).toMatchObject({ mode: 0o750 })
    expect(await rejection(volume.makeDir('/nope/deeper'))).toBeInstanceOf(VolumePathNotFoundError)
    await volume.makeDir('/tree/a/b', { force: true })
    await volume.writeFile('/tree/a/b/leaf', 'leaf')
    await volume.writeFile('/tree/top', 'top')

    expect((await volume.list('/tree')).map((e) => e.path)).toEqual(['/tree/a', '/tree/top'])
    expect((await volume.list('/tree', { depth: 3 })).map((e) => e.path)).toEqual([
      '/tree/a',
      '/tree/a/b',
      '/tree/a/b/leaf',
      '/tree/top',
    ])
    for (const depth of [0, 11]) {
      const error = await rejection(volume.list('/tree', { depth }))
      expect(error.message).toBe('400: depth must be between 1 and 10')
    }
    expect(await rejection(volume.list('/absent'))).toBeInstanceOf(VolumePathNotFoundError)
    expect(await volume.exists('/tree/top')).toBe(true)
    expect(await volume.exists('/tree/absent')).toBe(false)
    expect(await volume.getInfo('/tree/top')).toMatchObject({ type: 'file', size: 3 })
    expect(await volume.getInfo('/')).toMatchObject({ type: 'directory', mode: 0o777, uid: 0 })
  })

  it('changes metadata, mode then owner, and removes trees but not the root', async () => {
    const volume = await Volume.connect(early.volumeId, opts())
    await volume.writeFile('/meta', 'x')
    expect(await volume.updateMetadata('/meta', { mode: 0o640 })).toMatchObject({
      mode: 0o640,
      uid: 9090,
    })
    expect(await volume.updateMetadata('/meta', { uid: 1234, gid: 4321 })).toMatchObject({
      mode: 0o640,
      uid: 1234,
      gid: 4321,
    })
    expect(await rejection(volume.updateMetadata('/absent', { mode: 0o600 }))).toBeInstanceOf(
      VolumePathNotFoundError,
    )

    await volume.writeFile('/doomed/a/b/c', 'x', { force: true })
    await volume.remove('/doomed')
    expect(await volume.exists('/doomed')).toBe(false)
    await volume.remove('/meta')
    expect(await rejection(volume.remove('/meta'))).toBeInstanceOf(VolumePathNotFoundError)
    const root = await rejection(volume.remove('/'))
    expect(root).toBeInstanceOf(VolumeError)
    expect(root.message).toBe('400: cannot delete root')
  })

  it('enforces the size limit and reports use', async () => {
    const created = await callApi(serve.client, 'POST', '/volumes', { name: 'small', sizeMB: 16 })
    expect(created).toMatchObject({ status: 201, body: { sizeMB: 16, usedMB: expect.any(Number) } })
    const volume = await Volume.connect(created.body.volumeID, opts())
    const chunk = new Uint8Array(4 * 1024 * 1024).fill(7)
    await volume.writeFile('/fits', chunk.buffer)
    const used = await callApi(serve.client, 'GET', `/volumes/${volume.volumeId}`)
    expect(used.body.usedMB).toBeGreaterThanOrEqual(4)
    const tooBig = new Uint8Array(20 * 1024 * 1024).fill(9)
    const full = await rejection(volume.writeFile('/too-big', tooBig.buffer))
    expect(full).toBeInstanceOf(VolumeError)
    expect(full.message).toBe(
      '507: "/too-big": no space left on the volume (its size limit is 16 MiB)',
    )
    // The failed file is gone, and what fitted is still whole.
    expect(await volume.exists('/too-big')).toBe(false)
    // Compared as one buffer: an element-wise match of 4 MiB takes the test runner long.
    const fits = await volume.readFile('/fits', { format: 'bytes' })
    expect(Buffer.from(fits).equals(Buffer.from(chunk))).toBe(true)
    await Volume.destroy(volume.volumeId, opts())
  })
})

describe('api.<domain>, where client.env points E2B_VOLUME_API_URL', () => {
  it('serves the content API through the proxy, large bodies both ways', async () => {
    const volume = await Volume.connect(early.volumeId, opts())
    // Plain HTTP on the proxy port: this process does not trust Sandbar's certificate.
    const apiUrl = `http://api.${serve.client.domain}`
    const large = new Uint8Array(3 * 1024 * 1024).map((_, i) => i % 251)
    await volume.writeFile('/through-proxy', large.buffer, { apiUrl })
    const back = await volume.readFile('/through-proxy', { format: 'bytes', apiUrl })
    expect(Buffer.from(back).equals(Buffer.from(large))).toBe(true)
    await volume.remove('/through-proxy', { apiUrl })
  })
})

describe('tokens', () => {
  it("refuses another volume's token, a forged one, and none", async () => {
    const other = await Volume.create('other', opts())
    const mine = await Volume.connect(early.volumeId, opts())
    const crossed = new Volume(early.volumeId, 'early', other.token)
    const refused = await rejection(crossed.readFile('/hello.txt'))
    expect(refused).toBeInstanceOf(AuthenticationError)
    expect(refused.message).toContain('the volume token is for another volume')
    const [header, payload] = mine.token.split('.')
    const forged = new Volume(early.volumeId, 'early', `${header}.${payload}.AAAA`)
    expect(await rejection(forged.list('/'))).toBeInstanceOf(AuthenticationError)
    const answer = await fetch(`${serve.client.apiUrl}/volumecontent/${early.volumeId}/dir?path=/`)
    expect(answer.status).toBe(401)
    expect(await answer.json()).toEqual({
      code: 'unauthorized',
      message: 'a volume token is required',
    })
    // A deleted volume's token opens nothing.
    await Volume.destroy(other.volumeId, opts())
    expect(await rejection(other.list('/'))).toBeInstanceOf(AuthenticationError)
  })
})

describe('a sandbox planting symlinks in the volume', () => {
  it('gets nothing outside it read, written, changed or removed', async () => {
    const volume = await Volume.connect(early.volumeId, opts())
    // What a sandbox could do through its mount: links to the host's files and directories.
    const dir = hostDir(volume)
    await symlink('/etc', path.join(dir, 'etc'))
    await symlink('/etc/shadow', path.join(dir, 'shadow'))
    const outside = path.join(serve.dataDir, 'outside')
    await mkdir(outside)
    await writeFile(path.join(outside, 'keep'), 'host file')
    await symlink(outside, path.join(dir, 'out'))

    const attempts: (() => Promise<unknown>)[] = [
      () => volume.readFile('/etc/passwd'),
      () => volume.readFile('/shadow'),
      () => volume.writeFile('/shadow', 'pwned', { force: true }),
      () => volume.writeFile('/out/new', 'pwned', { force: true }),
      () => volume.makeDir('/out/newdir', { force: true }),
      () => volume.updateMetadata('/shadow', { mode: 0o777 }),
      () => volume.updateMetadata('/out/keep', { uid: 1 }),
      () => volume.remove('/out/keep'),
      () => volume.list('/out'),
    ]
    for (const attempt of attempts) {
      const error = await rejection(attempt())
      expect(error, error.message).toBeInstanceOf(VolumeError)
      expect(error.message).toMatch(/^400: .*symbolic link/)
    }
    expect(await volume.getInfo('/shadow')).toMatchObject({
      type: 'symlink',
      target: '/etc/shadow',
    })
    const listed = await volume.list('/', { depth: 3 })
    expect(listed.filter((e) => e.type === 'symlink').map((e) => e.path)).toEqual([
      '/etc',
      '/out',
      '/shadow',
    ])
    expect(listed.some((e) => e.path.startsWith('/etc/'))).toBe(false)
    // Removing a link removes the link.
    await volume.remove('/out')
    expect(await readFile(path.join(outside, 'keep'), 'utf8')).toBe('host file')
    expect(await readFile('/etc/shadow', 'utf8')).not.toBe('pwned')
  })
})

describe('across a restart', () => {
  it('keeps every volume and its data, mounting them again as after a reboot', async () => {
    // A volume whose data a crash kept from being made (its row stored first) gets it made.
    const unmade = await Volume.create('unmade', opts())
    // Killed outright (the journal keeps what was written); a reboot's lost mounts are made
    // by unmounting while the service is down.
    await serve.crashAndRestart(async () => {
      const volumesDir = path.join(serve.dataDir, 'volumes')
      const mounts = await readFile('/proc/self/mountinfo', 'utf8')
      for (const name of await readdir(volumesDir)) {
        const dir = path.join(volumesDir, name)
        if (mounts.includes(` ${dir} `)) await run('umount', [dir])
      }
      await rm(`${hostDir(unmade)}.img`)
      await rmdir(hostDir(unmade))
    })
    const volume = await Volume.connect(early.volumeId, opts())
    expect(await volume.readFile('/hello.txt')).toBe('hello volume')
    expect((await Volume.list(opts())).map((v) => v.name)).toContain('early')
    const remade = await Volume.connect(unmade.volumeId, opts())
    expect(await remade.list('/')).toEqual([])
    await remade.writeFile('/now', 'usable')
    expect(serve.output()).toContain('volume has no data on this host; making it empty')
    await Volume.destroy(unmade.volumeId, opts())
  })
})

describe('an expired token', () => {
  it('is refused as AuthenticationError until the volume is connected again', async () => {
    const expiry = Number(decodeJwt(early.token).exp) * 1000
    await sleep(Math.max(0, expiry - Date.now() + 1100))
    const error = await rejection(early.readFile('/hello.txt'))
    expect(error).toBeInstanceOf(AuthenticationError)
    expect(error.message).toContain('the volume token has expired')
    const fresh = await Volume.connect(early.volumeId, opts())
    expect(await fresh.readFile('/hello.txt')).toBe('hello volume')
  })
})
