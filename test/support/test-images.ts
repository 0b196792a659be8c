import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmod,
  copyFile,
  lchown,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** Test images as OCI layouts, one directory per recipe: reruns reuse them. */
export const TEST_IMAGE_CACHE = '/var/cache/sandbar-test/images'

/** An image in an OCI layout, ready for `ImageRegistry.push`. */
export interface TestImage {
  layout: string
  tag: string
  /** The tag names an index: push it with every image in it. */
  all?: boolean
}

/** The files and config a test expects of the musl-only image. */
export const MUSL_IMAGE = {
  env: { PATH: '/bin', GREETING: 'hello world', OPTIONS: 'a=b' },
  workdir: '/home/user',
  user: 'user',
  notes: 'written by the image\n',
}

/**
 * A glibc-free image: Debian's musl loader (`/lib/ld-musl-x86_64.so.1`) and busybox-static with
 * its applet links (`/bin/sh` among them), no bash, no python; user `user` (1000) owns its home.
 */
export async function muslImage(): Promise<TestImage> {
  const packages = await packageVersions(['musl', 'busybox-static'])
  return cachedImage('musl', { packages }, async (build) => {
    await build.layer(async (root) => {
      await installBusybox(root)
      await put(root, 'lib', { dir: 0o755 })
      // The package's loader is a symlink to its libc.so; copyFile copies the file it names.
      await copyFile('/lib/ld-musl-x86_64.so.1', path.join(root, 'lib/ld-musl-x86_64.so.1'))
      await chmod(path.join(root, 'lib/ld-musl-x86_64.so.1'), 0o755)
      await put(root, 'etc/passwd', {
        text: 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000::/home/user:/bin/sh\n',
      })
      await put(root, 'etc/group', { text: 'root:x:0:\nuser:x:1000:\n' })
      await put(root, 'tmp', { dir: 0o1777 })
      await put(root, 'home/user', { dir: 0o750, owner: 1000 })
      await put(root, 'home/user/notes.txt', { text: MUSL_IMAGE.notes, mode: 0o640, owner: 1000 })
    })
    await build.config([
      ...Object.entries(MUSL_IMAGE.env).flatMap(([key, value]) => [
        '--config.env',
        `${key}=${value}`,
      ]),
      `--config.workingdir=${MUSL_IMAGE.workdir}`,
      `--config.user=${MUSL_IMAGE.user}`,
    ])
  })
}

/**
 * Two layers: the second deletes the first's `/etc/removed.txt` (whiteout `.wh.removed.txt`)
 * and replaces `/opt/app` (opaque whiteout `.wh..wh..opq`) with a directory holding `new.txt`.
 */
export async function layeredImage(): Promise<TestImage> {
  const packages = await packageVersions(['busybox-static'])
  return cachedImage('layered', { packages }, async (build) => {
    await build.layer(async (root) => {
      // A shell and tools: template steps run shell scripts (busybox-static needs no libc).
      await installBusybox(root)
      await put(root, 'etc/removed.txt', { text: 'deleted by layer 2\n' })
      await put(root, 'etc/kept.txt', { text: 'kept\n', mode: 0o604, owner: 123, group: 456 })
      await put(root, 'opt/app/old.txt', { text: 'hidden by layer 2\n' })
      await put(root, 'opt/app/sub/deep.txt', { text: 'hidden by layer 2\n' })
      await put(root, 'opt/other/file.txt', { text: 'untouched\n' })
    })
    await build.layer(async (root) => {
      await put(root, 'etc/.wh.removed.txt', { text: '' })
      await put(root, 'opt/app/.wh..wh..opq', { text: '' })
      await put(root, 'opt/app/new.txt', { text: 'from layer 2\n', owner: 1000 })
    })
  })
}

/** busybox-static at /bin/busybox with a link per applet (`/bin/sh` among them). */
async function installBusybox(root: string): Promise<void> {
  await put(root, 'bin', { dir: 0o755 })
  await copyFile('/usr/bin/busybox', path.join(root, 'bin/busybox'))
  await chmod(path.join(root, 'bin/busybox'), 0o755)
  const { stdout } = await run('/usr/bin/busybox', ['--list'])
  for (const applet of stdout.split('\n').filter((name) => name !== '' && name !== 'busybox')) {
    await symlink('busybox', path.join(root, 'bin', applet))
  }
}

/** An OCI index of an amd64 and an arm64 image; each has `/arch` naming its architecture. */
export function multiArchImage(): Promise<TestImage> {
  return cachedImage(
    'multi-arch',
    {},
    async (build) => {
      for (const arch of ['amd64', 'arm64']) {
        await build.layer(async (root) => put(root, 'arch', { text: `${arch}\n` }), arch)
        await build.config([`--architecture=${arch}`, '--os=linux'], arch)
      }
      await build.index('image', ['amd64', 'arm64'])
    },
    true,
  )
}

/**
 * A Debian bookworm image made from the base template's layer (`baseLayer`, a directory the
 * agent tests build once), so no second mmdebstrap run is needed.
 */
export async function debianImage(baseLayer: string): Promise<TestImage> {
  return cachedImage('debian', { baseLayer }, async (build) => {
    await build.layerFromTar(async (tar) => {
      await run('tar', ['--numeric-owner', '--xattrs', '-C', baseLayer, '-cf', tar, '.'], {
        maxBuffer: 64 * 1024 * 1024,
      })
    })
  })
}

interface ImageBuild {
  /** Adds a layer holding what `fill` writes into an empty directory (owners kept). */
  layer(fill: (root: string) => Promise<void>, tag?: string): Promise<void>
  /** Adds a layer from the tar archive `make` writes. */
  layerFromTar(make: (tar: string) => Promise<void>, tag?: string): Promise<void>
  /** `umoci config` with these flags. */
  config(flags: readonly string[], tag?: string): Promise<void>
  /** Tags an OCI index of the images `tags` (each with its config's platform) as `tag`. */
  index(tag: string, tags: readonly string[]): Promise<void>
}

/**
 * The layout built by `recipe` under TEST_IMAGE_CACHE, named by a hash of the recipe's inputs
 * and its code, built into a temp dir and renamed into place when missing.
 */
async function cachedImage(
  name: string,
  inputs: unknown,
  recipe: (build: ImageBuild) => Promise<void>,
  all = false,
): Promise<TestImage> {
  const key = createHash('sha256')
    .update(JSON.stringify({ name, inputs, recipe: recipe.toString() }))
    .digest('hex')
    .slice(0, 16)
  const layout = path.join(TEST_IMAGE_CACHE, `${name}-${key}`)
  const image: TestImage = { layout, tag: 'image', ...(all ? { all } : {}) }
  if (await exists(path.join(layout, 'index.json'))) return image
  await mkdir(TEST_IMAGE_CACHE, { recursive: true })
  const temp = await mkdtemp(path.join(TEST_IMAGE_CACHE, `.building-${name}-`))
  try {
    const building = path.join(temp, 'layout')
    await run('umoci', ['init', '--layout', building])
    await recipe(imageBuild(building, temp))
    await rename(building, layout).catch((error: unknown) => {
      // Another run built the same recipe first: theirs is as good.
      const code = error instanceof Error && 'code' in error ? error.code : undefined
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error
    })
  } finally {
    await rm(temp, { recursive: true, force: true })
  }
  return image
}

function imageBuild(layout: string, scratch: string): ImageBuild {
  const created = new Set<string>()
  const ensure = async (tag: string) => {
    if (created.has(tag)) return
    await run('umoci', ['new', '--image', `${layout}:${tag}`])
    created.add(tag)
  }
  const addTar = async (tar: string, tag: string) => {
    await ensure(tag)
    await run('umoci', ['raw', 'add-layer', '--image', `${layout}:${tag}`, tar])
  }
  return {
    layer: async (fill, tag = 'image') => {
      const root = await mkdtemp(path.join(scratch, 'layer-'))
      await fill(root)
      const tar = `${root}.tar`
      const entries = await readdir(root)
      await run('tar', ['--create', '--numeric-owner', '--file', tar, '-C', root, '--', ...entries])
      await addTar(tar, tag)
    },
    layerFromTar: async (make, tag = 'image') => {
      const tar = path.join(await mkdtemp(path.join(scratch, 'tar-')), 'layer.tar')
      await make(tar)
      await addTar(tar, tag)
    },
    config: async (flags, tag = 'image') => {
      await ensure(tag)
      await run('umoci', ['config', '--image', `${layout}:${tag}`, ...flags])
    },
    index: (tag, tags) => writeIndex(layout, tag, tags),
  }
}

const REF_NAME = 'org.opencontainers.image.ref.name'

interface Descriptor {
  mediaType: string
  digest: string
  size: number
  annotations?: Record<string, string>
  platform?: { architecture: string; os: string }
}

/** Adds an image index blob listing the images `tags` with their platforms, tagged `tag`. */
async function writeIndex(layout: string, tag: string, tags: readonly string[]): Promise<void> {
  const indexFile = path.join(layout, 'index.json')
  const top = JSON.parse(await readFile(indexFile, 'utf8')) as { manifests: Descriptor[] }
  const manifests: Descriptor[] = []
  for (const name of tags) {
    const found = top.manifests.find((entry) => entry.annotations?.[REF_NAME] === name)
    if (found === undefined) throw new Error(`no image tagged ${name} in ${layout}`)
    const manifest = JSON.parse(await readBlob(layout, found.digest)) as {
      config: { digest: string }
    }
    const config = JSON.parse(await readBlob(layout, manifest.config.digest)) as {
      architecture: string
      os: string
    }
    manifests.push({
      mediaType: found.mediaType,
      digest: found.digest,
      size: found.size,
      platform: { architecture: config.architecture, os: config.os },
    })
  }
  const index = JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests,
  })
  const hex = createHash('sha256').update(index).digest('hex')
  await writeFile(path.join(layout, 'blobs/sha256', hex), index)
  top.manifests.push({
    mediaType: 'application/vnd.oci.image.index.v1+json',
    digest: `sha256:${hex}`,
    size: Buffer.byteLength(index),
    annotations: { [REF_NAME]: tag },
  })
  await writeFile(indexFile, JSON.stringify(top))
}

function readBlob(layout: string, digest: string): Promise<string> {
  return readFile(path.join(layout, 'blobs', ...digest.split(':')), 'utf8')
}

interface Entry {
  text?: string
  /** A directory with this mode. */
  dir?: number
  mode?: number
  owner?: number
  group?: number
}

/** Writes a file or directory (parents 0755, root's) with its mode and owner. */
async function put(root: string, relative: string, entry: Entry): Promise<void> {
  const target = path.join(root, relative)
  await mkdir(path.dirname(target), { recursive: true, mode: 0o755 })
  if (entry.dir !== undefined) {
    await mkdir(target, { recursive: true })
    await chmod(target, entry.dir)
  } else {
    await writeFile(target, entry.text ?? '')
    await chmod(target, entry.mode ?? 0o644)
  }
  const owner = entry.owner ?? 0
  await lchown(target, owner, entry.group ?? owner)
}

async function packageVersions(names: readonly string[]): Promise<string> {
  const { stdout } = await run('dpkg-query', ['-W', ...names])
  return stdout
}

async function exists(file: string): Promise<boolean> {
  return readFile(file).then(
    () => true,
    () => false,
  )
}
