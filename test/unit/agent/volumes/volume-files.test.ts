import { spawn } from 'node:child_process'
import { once } from 'node:events'
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { VolumePathError } from '../../../../src/agent/volumes/volume-errors.js'
import { VolumeFiles } from '../../../../src/agent/volumes/volume-files.js'
import { volumePathSegments } from '../../../../src/agent/volumes/volume-path.js'

// The volume is a plain directory here: what is checked is that nothing outside it is read,
// written, changed or removed through it, whatever a sandbox planted in it.
let base = ''
let root = ''
let outside = ''
let files: VolumeFiles

beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'sbt-volume-files-'))
  root = path.join(base, 'volume')
  outside = path.join(base, 'outside')
  await mkdir(root)
  await mkdir(outside)
  await writeFile(path.join(outside, 'secret'), 'host secret')
  await chmod(path.join(outside, 'secret'), 0o600)
  files = new VolumeFiles(root, async () => {})
})

afterEach(async () => {
  await rm(base, { recursive: true, force: true })
})

/** The refusal `promise` ends in: its kind and message. */
async function refusal(promise: Promise<unknown>): Promise<{ kind: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  if (!(error instanceof VolumePathError)) throw new Error(`expected a refusal, got ${error}`)
  return { kind: error.kind, message: error.message }
}

const body = (content: string) => Readable.from([Buffer.from(content)])

async function outsideIsUntouched(): Promise<void> {
  expect(await readFile(path.join(outside, 'secret'), 'utf8')).toBe('host secret')
  expect((await stat(path.join(outside, 'secret'))).mode & 0o777).toBe(0o600)
  expect((await stat(outside)).uid).toBe(0)
}

describe('volumePathSegments', () => {
  it('makes paths absolute and resolves . and .. by name, never above the root', () => {
    expect(volumePathSegments('a/b')).toEqual(['a', 'b'])
    expect(volumePathSegments('/a/./b//c/')).toEqual(['a', 'b', 'c'])
    expect(volumePathSegments('/a/../../../etc/passwd')).toEqual(['etc', 'passwd'])
    expect(volumePathSegments('/')).toEqual([])
    expect(volumePathSegments('..')).toEqual([])
    expect(() => volumePathSegments('/a\0b')).toThrow(RangeError)
  })
})

describe('VolumeFiles', () => {
  it('writes, reads, lists and stats with the contract defaults', async () => {
    const written = await files.writeFile('/a/b.txt', body('hello'), { force: true })
    expect(written).toMatchObject({
      name: 'b.txt',
      type: 'file',
      path: '/a/b.txt',
      size: 5,
      mode: 0o666,
      uid: 9090,
      gid: 9090,
    })
    expect(await files.stat('/a')).toMatchObject({ type: 'directory', mode: 0o777, uid: 9090 })
    // A file's mode is not its parents': they stay directories anyone can enter.
    await files.writeFile('/p/q/secret', body('s'), { force: true, mode: 0o600, uid: 7 })
    expect(await files.stat('/p/q')).toMatchObject({ mode: 0o777, uid: 7 })
    expect(await files.stat('/p/q/secret')).toMatchObject({ mode: 0o600, uid: 7 })
    await files.remove('/p')
    expect(await new Response((await files.readFile('a/b.txt')).stream).text()).toBe('hello')
    expect((await files.list('/', 2)).map((entry) => entry.path)).toEqual(['/a', '/a/b.txt'])
    expect((await files.list('/', 1)).map((entry) => entry.path)).toEqual(['/a'])
    expect(await files.stat('/')).toMatchObject({ name: '/', path: '/', type: 'directory' })
  })

  it('creates exclusively without force, and overwrites keeping the owner with it', async () => {
    await files.writeFile('/f', body('one'), { uid: 1000, gid: 1001, mode: 0o640 })
    expect(await refusal(files.writeFile('/f', body('two'), {}))).toEqual({
      kind: 'exists',
      message: '"/f" already exists',
    })
    expect(await refusal(files.writeFile('/missing/f', body('x'), {}))).toMatchObject({
      kind: 'notFound',
      message: 'failed to stat: "/missing" not found.',
    })
    const again = await files.writeFile('/f', body('2'), { force: true })
    expect(again).toMatchObject({ size: 1, uid: 1000, gid: 1001, mode: 0o640 })
    expect(await readFile(path.join(root, 'f'), 'utf8')).toBe('2')
  })

  it('makes directories with parents only when forced, and refuses what exists', async () => {
    expect(await refusal(files.makeDir('/x/y', {}))).toMatchObject({ kind: 'notFound' })
    const made = await files.makeDir('/x/y', { force: true, uid: 5, gid: 6, mode: 0o750 })
    expect(made).toMatchObject({ path: '/x/y', uid: 5, gid: 6, mode: 0o750 })
    expect(await files.stat('/x')).toMatchObject({ uid: 5, gid: 6 })
    expect(await refusal(files.makeDir('/x/y', {}))).toMatchObject({ kind: 'exists' })
    expect(await files.makeDir('/x/y', { force: true })).toMatchObject({ mode: 0o750 })
    await files.writeFile('/file', body(''), {})
    expect(await refusal(files.makeDir('/file/sub', { force: true }))).toMatchObject({
      kind: 'notDirectory',
      message: '"/file": a component of the path is a file, but must be a directory',
    })
  })

  it('changes mode, then owner, of the entry itself', async () => {
    await files.writeFile('/f', body('x'), {})
    expect(await files.setAttributes('/f', { mode: 0o600 })).toMatchObject({
      mode: 0o600,
      uid: 9090,
    })
    expect(await files.setAttributes('/f', { uid: 1 })).toMatchObject({ uid: 1, gid: 9090 })
    expect(await refusal(files.setAttributes('/nope', { uid: 1 }))).toMatchObject({
      kind: 'notFound',
    })
  })

  it('removes a tree, refuses the root and a missing path', async () => {
    await files.writeFile('/d/e/f', body('x'), { force: true })
    await files.remove('/d')
    expect(await files.list('/', 1)).toEqual([])
    expect(await refusal(files.remove('/'))).toEqual({
      kind: 'root',
      message: 'cannot delete root',
    })
    expect(await refusal(files.remove('/d'))).toMatchObject({ kind: 'notFound' })
  })

  it('lists a symlink as one, with its target, and never descends through it', async () => {
    await symlink('/etc', path.join(root, 'etc-link'))
    await symlink(outside, path.join(root, 'out'))
    const entries = await files.list('/', 3)
    expect(entries.map(({ path, type, target }) => ({ path, type, target }))).toEqual([
      { path: '/etc-link', type: 'symlink', target: '/etc' },
      { path: '/out', type: 'symlink', target: outside },
    ])
    expect(await files.stat('/out')).toMatchObject({ type: 'symlink', target: outside })
  })

  describe('refuses to go through a symlink a sandbox planted', () => {
    beforeEach(async () => {
      await symlink(outside, path.join(root, 'dir-link'))
      await symlink(path.join(outside, 'secret'), path.join(root, 'file-link'))
      await mkdir(path.join(root, 'real'))
    })

    it('in the middle of a path', async () => {
      const symlinkRefusal = {
        kind: 'symlink',
        message:
          '"/dir-link": a component of the path is a symbolic link, which the volume content API does not follow',
      }
      expect(await refusal(files.readFile('/dir-link/secret'))).toEqual(symlinkRefusal)
      expect(await refusal(files.stat('/dir-link/secret'))).toEqual(symlinkRefusal)
      expect(await refusal(files.list('/dir-link', 1))).toEqual(symlinkRefusal)
      expect(await refusal(files.writeFile('/dir-link/new', body('x'), { force: true }))).toEqual(
        symlinkRefusal,
      )
      expect(await refusal(files.makeDir('/dir-link/new', { force: true }))).toEqual(symlinkRefusal)
      expect(await refusal(files.setAttributes('/dir-link/secret', { mode: 0o777 }))).toEqual(
        symlinkRefusal,
      )
      expect(await refusal(files.remove('/dir-link/secret'))).toEqual(symlinkRefusal)
      await outsideIsUntouched()
      expect(await readFile(path.join(outside, 'new')).catch(() => 'absent')).toBe('absent')
    })

    it('as the leaf', async () => {
      expect(await refusal(files.readFile('/file-link'))).toMatchObject({ kind: 'symlink' })
      expect(
        await refusal(files.writeFile('/file-link', body('pwned'), { force: true })),
      ).toMatchObject({ kind: 'symlink' })
      expect(await refusal(files.writeFile('/file-link', body('pwned'), {}))).toMatchObject({
        kind: 'exists',
      })
      expect(
        await refusal(files.setAttributes('/file-link', { mode: 0o666, uid: 1 })),
      ).toMatchObject({ kind: 'symlink' })
      expect(await refusal(files.setAttributes('/dir-link', { mode: 0o777 }))).toMatchObject({
        kind: 'symlink',
      })
      expect(await refusal(files.makeDir('/dir-link', { force: true }))).toMatchObject({
        kind: 'exists',
      })
      // Removing the link removes the link, not what it points at.
      await files.remove('/file-link')
      await files.remove('/dir-link')
      expect(await files.list('/', 1)).toMatchObject([{ path: '/real' }])
      await outsideIsUntouched()
      expect(await readFile(path.join(outside, 'secret'), 'utf8')).toBe('host secret')
    })

    it('to /etc, by .. and by an absolute path', async () => {
      await symlink('/etc', path.join(root, 'etc'))
      expect(await refusal(files.readFile('/etc/passwd'))).toMatchObject({ kind: 'symlink' })
      expect(await refusal(files.readFile('/real/../../../../etc/passwd'))).toMatchObject({
        kind: 'symlink',
      })
      expect(await refusal(files.readFile('../../../../../usr/bin/env'))).toMatchObject({
        kind: 'notFound',
      })
    })

    it('inside a tree being removed', async () => {
      await mkdir(path.join(root, 'real', 'sub'))
      await symlink(outside, path.join(root, 'real', 'sub', 'escape'))
      await files.remove('/real')
      expect(await files.list('/', 1)).toMatchObject([
        { path: '/dir-link' },
        { path: '/file-link' },
      ])
      await outsideIsUntouched()
    })
  })

  it('keeps writing into what it opened when a sandbox swaps the directory for a symlink', async () => {
    // The race a check-then-use would lose: the directory is walked into and the file made,
    // then (as the body's first chunk is read) the directory is renamed away and a symlink to
    // outside put in its place. The write goes on through the descriptors opened before, so
    // the bytes land in the moved directory, still inside the volume.
    await mkdir(path.join(root, 'd'))
    const racing = Readable.from(
      (async function* () {
        await rename(path.join(root, 'd'), path.join(root, 'moved'))
        await symlink(outside, path.join(root, 'd'))
        yield Buffer.from('data')
      })(),
    )
    await files.writeFile('/d/planted', racing, {})
    expect(await readFile(path.join(root, 'moved', 'planted'), 'utf8')).toBe('data')
    expect(await readFile(path.join(outside, 'planted')).catch(() => 'absent')).toBe('absent')
    expect((await lstat(path.join(root, 'd'))).isSymbolicLink()).toBe(true)
    // The next call sees the symlink, and refuses it.
    expect(await refusal(files.readFile('/d/planted'))).toMatchObject({ kind: 'symlink' })
  })

  it('never reaches outside while another process swaps a directory and a symlink', async () => {
    // A sandbox racing the API: a separate process renames `d` away, puts a symlink to
    // outside in its place, and back, as fast as it can, while every operation runs on paths
    // through `d`. Whatever each call answers, nothing outside may change.
    await mkdir(path.join(root, 'd'))
    const swapper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); const [d, away, out] = process.argv.slice(1)
         for (;;) { try { fs.renameSync(d, away); fs.symlinkSync(out, d); fs.unlinkSync(d); fs.renameSync(away, d) } catch {} }`,
        path.join(root, 'd'),
        path.join(root, 'away'),
        outside,
      ],
      { stdio: 'ignore' },
    )
    try {
      const until = Date.now() + 1500
      let rounds = 0
      while (Date.now() < until) {
        rounds++
        await Promise.allSettled([
          files.writeFile('/d/f', body('raced'), { force: true, uid: 4242 }),
          files.readFile('/d/f').then(({ stream }) => stream.cancel()),
          files.makeDir('/d/sub/deeper', { force: true, uid: 4242 }),
          files.setAttributes('/d/f', { mode: 0o777, uid: 4242 }),
          files.remove('/d/sub'),
          files.list('/d', 3),
        ])
      }
      expect(rounds).toBeGreaterThan(10)
    } finally {
      swapper.kill('SIGKILL')
      await once(swapper, 'exit')
    }
    expect((await readdir(outside)).sort()).toEqual(['secret'])
    await outsideIsUntouched()
  })

  it('refuses a name longer than the filesystem takes', async () => {
    expect(await refusal(files.writeFile(`/${'n'.repeat(256)}`, body('x'), {}))).toMatchObject({
      kind: 'nameTooLong',
    })
    expect(await files.writeFile(`/${'n'.repeat(255)}`, body('x'), {})).toMatchObject({ size: 1 })
  })

  it('refuses a FIFO where a file is expected at once, instead of waiting for a writer', async () => {
    await runMkfifo(path.join(root, 'pipe'))
    expect(await refusal(files.readFile('/pipe'))).toMatchObject({ kind: 'wrongType' })
    expect(await refusal(files.writeFile('/pipe', body('x'), { force: true }))).toMatchObject({
      kind: 'wrongType',
    })
    expect(await files.stat('/pipe')).toMatchObject({ type: 'unknown' })
  })
})

async function runMkfifo(target: string): Promise<void> {
  const { execFile } = await import('node:child_process')
  const { promisify } = await import('node:util')
  await promisify(execFile)('mkfifo', [target])
}
