import { chmod, chown, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from '../../logger.js'
import type { RegistryAuth } from '../index.js'
import { type ImageConfig, readLayoutConfig } from './image-config.js'
import { formatImageReference, isLoopbackRegistry, parseImageReference } from './image-reference.js'
import { ImagePullError, runImageTool } from './image-tool.js'
import { copyArgs, inspectRawArgs, type RegistryAccess, unpackArgs } from './image-tool-args.js'
import { hostArchitecture, platformManifestDigest } from './platform-manifest.js'
import { registryLogin, writeAuthFile } from './registry-login.js'

export { ImagePullError }

export interface ImageDigestOptions {
  /** Where the private temp dir (holding the auth file) is made. */
  workDir: string
  /** Each line skopeo prints. */
  onLog?: (line: string) => void
}

export interface PullImageOptions {
  image: string
  auth?: RegistryAuth
  /** An existing empty directory that receives the image's root filesystem. */
  dest: string
  /** Where the private temp dir is made; on `dest`'s filesystem, so the tree moves by rename. */
  workDir: string
  logger: Logger
  /** Each line skopeo and umoci print (the build log). */
  onLog?: (line: string) => void
}

/** The pulled image as a build uses it. */
export interface PulledImage extends ImageConfig {
  /** Digest of the host platform's image manifest in the registry. */
  digest: string
}

/**
 * The digest of the image manifest for the host's platform, read from the registry without
 * fetching any layer: a cache key that changes whenever the image does.
 */
export async function imageDigest(
  image: string,
  auth: RegistryAuth | undefined,
  options: ImageDigestOptions,
): Promise<string> {
  return withTempDir(options.workDir, async (temp) => {
    const reference = parseImageReference(image)
    const access = await registryAccess(reference.registry, auth, temp, image)
    return resolveDigest(image, access, options.onLog ?? ignore)
  })
}

/**
 * Pulls `image` (the host's platform picked from a multi-arch index) and unpacks its root
 * filesystem into `dest` with owners as the image has them and whiteouts applied. Everything
 * it writes besides `dest` lives in a private temp dir under `workDir`, removed at the end
 * whether the pull worked or not.
 */
export async function pullImage(options: PullImageOptions): Promise<PulledImage> {
  const onLog = options.onLog ?? ignore
  const logger = options.logger.child({ image: options.image })
  return withTempDir(options.workDir, async (temp) => {
    const reference = parseImageReference(options.image)
    const access = await registryAccess(reference.registry, options.auth, temp, options.image)
    const digest = await resolveDigest(options.image, access, onLog)
    const source = `${reference.registry}/${reference.repository}@${digest}`
    const layout = path.join(temp, 'layout')
    const bundle = path.join(temp, 'bundle')
    const started = performance.now()
    await runImageTool('skopeo', copyArgs(source, layout, access), {
      what: `pulling ${options.image} failed`,
      onLine: onLog,
      logStdout: true,
    })
    const pulled = performance.now()
    await runImageTool('umoci', unpackArgs(layout, bundle), {
      what: `unpacking ${options.image} failed`,
      onLine: onLog,
      logStdout: true,
    })
    const config = await readLayoutConfig(layout)
    await moveContents(path.join(bundle, 'rootfs'), options.dest)
    logger.info(
      {
        digest,
        pullMillis: Math.round(pulled - started),
        unpackMillis: Math.round(performance.now() - pulled),
      },
      'image pulled',
    )
    return { digest, ...config }
  })
}

async function resolveDigest(
  image: string,
  access: RegistryAccess,
  onLog: (line: string) => void,
): Promise<string> {
  const source = formatImageReference(parseImageReference(image))
  const raw = await runImageTool('skopeo', inspectRawArgs(source, access), {
    what: `pulling ${image} failed`,
    onLine: onLog,
  })
  try {
    return platformManifestDigest(raw, hostArchitecture())
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new ImagePullError(`pulling ${image} failed: ${reason}`)
  }
}

async function registryAccess(
  registry: string,
  auth: RegistryAuth | undefined,
  temp: string,
  image: string,
): Promise<RegistryAccess> {
  const loopback = isLoopbackRegistry(registry)
  if (auth === undefined) return { loopback }
  const login = await registryLogin(auth).catch((error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error)
    throw new ImagePullError(`logging in to ${registry} for ${image} failed: ${reason}`)
  })
  return { loopback, authFile: await writeAuthFile(temp, registry, login) }
}

/**
 * Moves every entry of `rootfs` into `dest` (rename: no copy) and gives `dest` the mode and
 * owner the image gives its `/`.
 */
async function moveContents(rootfs: string, dest: string): Promise<void> {
  for (const name of await readdir(rootfs)) {
    await rename(path.join(rootfs, name), path.join(dest, name))
  }
  const root = await stat(rootfs)
  await chown(dest, root.uid, root.gid)
  await chmod(dest, root.mode & 0o7777)
}

/**
 * Temp directories of pulls: `<prefix><pid>-<random>`, so a builder starting after a crash
 * removes those whose process is gone (create-builder.ts).
 */
export const IMAGE_PULL_PREFIX = '.image-pull-'

/** Runs `work` with a fresh directory only root enters (mkdtemp: 0700), removed after. */
async function withTempDir<T>(workDir: string, work: (temp: string) => Promise<T>): Promise<T> {
  const temp = await mkdtemp(path.join(workDir, `${IMAGE_PULL_PREFIX}${process.pid}-`))
  try {
    return await work(temp)
  } finally {
    await rm(temp, { recursive: true, force: true })
  }
}

function ignore(): void {}
