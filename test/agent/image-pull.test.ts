import { execFile } from 'node:child_process'
import { lstat, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { ImagePullError, imageDigest, pullImage } from '../../src/builder/image/image-pull.js'
import { type ImageRegistry, startImageRegistry } from '../support/image-registry.js'
import {
  debianImage,
  layeredImage,
  MUSL_IMAGE,
  multiArchImage,
  muslImage,
} from '../support/test-images.js'
import { TEMPLATE_CACHE } from './base-layer.js'

const run = promisify(execFile)
const logger = pino({ level: 'silent' })
const credentials = { username: 'sbt-puller', password: 'sbt-secret-pw' }

let open: ImageRegistry
let privateRegistry: ImageRegistry
let work: string

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'sbt-image-pull-'))
  open = await startImageRegistry()
  privateRegistry = await startImageRegistry({ credentials })
  const musl = await muslImage()
  await open.push(musl.layout, musl.tag, 'tests/musl:1')
  await privateRegistry.push(musl.layout, musl.tag, 'private/musl:1')
  const layered = await layeredImage()
  // Docker's own manifest format here (the others stay OCI): skopeo converts on push.
  await open.push(layered.layout, layered.tag, 'tests/layered:1', { format: 'v2s2' })
  const multi = await multiArchImage()
  await open.push(multi.layout, multi.tag, 'tests/multi:1', { all: true })
  // Built here, under the hook's timeout: a tar of the base layer, some seconds when cold.
  const debian = await debianImage(path.join(TEMPLATE_CACHE, 'layers', inject('baseLayerID')))
  await open.push(debian.layout, debian.tag, 'tests/debian:bookworm')
})

afterAll(async () => {
  await open?.stop()
  await privateRegistry?.stop()
  if (work !== undefined) await rm(work, { recursive: true, force: true })
})

/** Pulls into a fresh empty directory; returns it, the result and the lines logged. */
async function pull(image: string, auth?: Parameters<typeof pullImage>[0]['auth']) {
  const dest = await mkdtemp(path.join(work, 'dest-'))
  const lines: string[] = []
  const result = await pullImage({
    image,
    dest,
    workDir: work,
    logger,
    onLog: (line) => lines.push(line),
    ...(auth === undefined ? {} : { auth }),
  })
  return { dest, result, lines }
}

async function owner(file: string): Promise<string> {
  const info = await lstat(file)
  return `${info.uid}:${info.gid} ${(info.mode & 0o7777).toString(8)}`
}

/** What pullImage left in the work dir besides the test's own destinations. */
async function leftovers(): Promise<string[]> {
  return (await readdir(work)).filter((name) => !name.startsWith('dest-'))
}

describe('pullImage', () => {
  test('unpacks a musl-only image with its owners, config and a working busybox', async () => {
    const { dest, result, lines } = await pull(`${open.host}/tests/musl:1`)
    expect(result.digest).toBe((await open.manifest('tests/musl', '1')).digest)
    expect(result.env).toEqual(MUSL_IMAGE.env)
    expect(result.workdir).toBe(MUSL_IMAGE.workdir)
    expect(result.user).toBe(MUSL_IMAGE.user)
    expect(await readlink(path.join(dest, 'bin/sh'))).toBe('busybox')
    expect(await owner(path.join(dest, 'home/user'))).toBe('1000:1000 750')
    expect(await owner(path.join(dest, 'home/user/notes.txt'))).toBe('1000:1000 640')
    expect(await owner(path.join(dest, 'tmp'))).toBe('0:0 1777')
    expect(await readFile(path.join(dest, 'home/user/notes.txt'), 'utf8')).toBe(MUSL_IMAGE.notes)
    for (const absent of ['bin/bash', 'usr/bin/python3', 'lib/x86_64-linux-gnu', 'lib64']) {
      await expect(lstat(path.join(dest, absent)), absent).rejects.toThrow(/ENOENT/)
    }
    const shell = await run('chroot', [
      dest,
      '/bin/sh',
      '-c',
      'echo $((6 * 7)) $(stat -c %U /home/user)',
    ])
    expect(shell.stdout).toBe('42 user\n')
    // The musl loader runs on its own: with no program to load it prints its version.
    const loader = await run('chroot', [dest, '/lib/ld-musl-x86_64.so.1']).catch(
      (error: { stderr: string }) => error,
    )
    expect(loader.stderr).toMatch(/^musl libc \(x86_64\)/)
    expect(lines.join('\n')).toMatch(/Copying blob/)
    expect(await leftovers()).toEqual([])
  })

  test('applies whiteouts: a deleted file and an opaque directory of the lower layer', async () => {
    const { dest, result } = await pull(`${open.host}/tests/layered:1`)
    expect(result.digest).toBe((await open.manifest('tests/layered', '1')).digest)
    await expect(lstat(path.join(dest, 'etc/removed.txt'))).rejects.toThrow(/ENOENT/)
    expect(await readFile(path.join(dest, 'etc/kept.txt'), 'utf8')).toBe('kept\n')
    expect(await owner(path.join(dest, 'etc/kept.txt'))).toBe('123:456 604')
    expect(await readdir(path.join(dest, 'opt/app'))).toEqual(['new.txt'])
    expect(await owner(path.join(dest, 'opt/app/new.txt'))).toBe('1000:1000 644')
    expect(await readdir(path.join(dest, 'opt/other'))).toEqual(['file.txt'])
    const { stdout } = await run('find', [dest, '-name', '.wh.*'])
    expect(stdout).toBe('')
  })

  test('picks the amd64 image from a multi-arch index', async () => {
    const index = await open.manifest('tests/multi', '1')
    const entries = (
      JSON.parse(index.body) as {
        manifests: { digest: string; platform: { architecture: string } }[]
      }
    ).manifests
    const amd64 = entries.find((entry) => entry.platform.architecture === 'amd64')
    expect(entries.map((entry) => entry.platform.architecture).sort()).toEqual(['amd64', 'arm64'])
    const { dest, result } = await pull(`${open.host}/tests/multi:1`)
    expect(await readFile(path.join(dest, 'arch'), 'utf8')).toBe('amd64\n')
    expect(result.digest).toBe(amd64?.digest)
    expect(result.digest).not.toBe(index.digest)
    const digest = await imageDigest(`${open.host}/tests/multi:1`, undefined, { workDir: work })
    expect(digest).toBe(amd64?.digest)
    expect(await leftovers()).toEqual([])
  })

  test('a private registry refuses without credentials, naming its reason, and serves with them', async () => {
    const image = `${privateRegistry.host}/private/musl:1`
    const dest = await mkdtemp(path.join(work, 'dest-'))
    const lines: string[] = []
    const refused = pullImage({ image, dest, workDir: work, logger, onLog: (l) => lines.push(l) })
    await expect(refused).rejects.toThrow(ImagePullError)
    await expect(refused).rejects.toThrow(/unauthorized: authentication required/)
    const wrong = { type: 'registry' as const, username: credentials.username, password: 'nope' }
    const badLogin = pullImage({ image, dest, workDir: work, logger, auth: wrong })
    await expect(badLogin).rejects.toThrow(/unauthorized/)
    await expect(imageDigest(image, undefined, { workDir: work })).rejects.toThrow(
      /unauthorized: authentication required/,
    )
    expect(await readdir(dest)).toEqual([])
    expect(await leftovers()).toEqual([])
    const { dest: pulled, result } = await pull(image, { type: 'registry', ...credentials })
    expect(await readFile(path.join(pulled, 'home/user/notes.txt'), 'utf8')).toBe(MUSL_IMAGE.notes)
    expect(result.digest).toBe((await privateRegistry.manifest('private/musl', '1')).digest)
    expect(await leftovers()).toEqual([])
  })

  test('credentials never appear on a command line', async () => {
    const image = `${privateRegistry.host}/private/musl:1`
    const seen: string[] = []
    const watcher = setInterval(() => {
      run('ps', ['-eo', 'args']).then(
        ({ stdout }) => seen.push(stdout),
        () => undefined,
      )
    }, 20)
    try {
      await pull(image, { type: 'registry', ...credentials })
    } finally {
      clearInterval(watcher)
    }
    expect(seen.join('\n')).toMatch(/skopeo/)
    expect(seen.join('\n')).not.toContain(credentials.password)
  })

  test('pulls a Debian image', async () => {
    const { dest } = await pull(`${open.host}/tests/debian:bookworm`)
    expect(await readFile(path.join(dest, 'etc/debian_version'), 'utf8')).toMatch(/^12\./)
    // shadow's group (42) reads /etc/shadow: owners other than root survive the pull.
    expect(await owner(path.join(dest, 'etc/shadow'))).toBe('0:42 640')
    const { stdout } = await run('chroot', [dest, '/bin/bash', '-c', 'echo $BASH_VERSION'])
    expect(stdout).toMatch(/^5\./)
  })
})
