import { createHash } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import * as z from 'zod/mini'
import { imageDigest, pullImage } from '../image/image-pull.js'
import type { BuildRequest } from '../index.js'
import { layerID, METADATA_LAYER_KIND } from '../layer-ids.js'
import type { BuildTools } from '../run-build.js'
import { type BuildContext, formatPhaseLine } from '../steps/index.js'
import {
  buildDebianBase,
  DEBIAN_BASE_IMAGES,
  debianBaseLayerID,
  debianBaseRecipe,
  writeSandboxFiles,
} from './debian-base.js'

/** Where a build starts: the base's layers and the context its steps begin with. */
export interface BaseLayers {
  layers: string[]
  context: BuildContext
  /** An image base (which gets §2.4's implicit user phase), not another template. */
  fromImage: boolean
}

/** Bumped when what an image layer holds besides the image changes (writeSandboxFiles). */
const IMAGE_LAYER_VERSION = 'sandbar-image-v1'

/** What a step context keeps of an image's config, cached beside the build's scratch space. */
const imageConfigSchema = z.object({
  env: z.record(z.string(), z.string()),
  workdir: z.optional(z.string()),
})

/**
 * The base phase (wire contract §2.4): `FROM` a template reuses its ready build's layers (always
 * cached); `FROM e2bdev/base` is Sandbar's Debian recipe; any other image is pulled from its
 * registry once per manifest digest.
 */
export async function prepareBase(
  request: BuildRequest,
  tools: BuildTools,
  signal: AbortSignal,
  onLine: (line: string) => void,
): Promise<BaseLayers> {
  const { base } = request
  if (base.kind === 'template') {
    const layers = withoutMetadataLayer(base.build.layers)
    const top = layers.at(-1) ?? ''
    onLine(formatPhaseLine('base', `FROM ${base.name}`, top, true))
    return {
      layers,
      context: {
        user: base.build.defaultUser,
        workdir: base.build.defaultWorkdir,
        env: base.build.envVars,
      },
      fromImage: false,
    }
  }
  signal.throwIfAborted()
  const root: BuildContext = { user: 'root', workdir: undefined, env: {} }
  if (DEBIAN_BASE_IMAGES.has(base.image)) {
    const recipe = await debianBaseRecipe()
    const id = debianBaseLayerID(recipe)
    const cached = !request.force && (await tools.agent.layers.has(id))
    onLine(formatPhaseLine('base', `FROM ${base.image}`, id, cached))
    if (!cached) {
      await tools.agent.layers.add(id, (dir) =>
        buildDebianBase(recipe, dir, tools.logger, (line) => {
          if (line.startsWith('I: ')) onLine(line)
        }),
      )
    }
    return { layers: [id], context: root, fromImage: true }
  }
  const options = { workDir: tools.workDir, onLog: onLine }
  const digest = await imageDigest(base.image, base.registry, options)
  const id = layerID('i', sha256(`${IMAGE_LAYER_VERSION}\n${digest}`))
  const configFile = path.join(tools.workDir, 'image-configs', `${id}.json`)
  const config = await readFile(configFile, 'utf8').then(
    (text) => imageConfigSchema.parse(JSON.parse(text)),
    () => undefined,
  )
  const cached = !request.force && config !== undefined && (await tools.agent.layers.has(id))
  onLine(formatPhaseLine('base', `FROM ${base.image}`, id, cached))
  if (cached) return { layers: [id], context: { ...root, ...config }, fromImage: true }
  await tools.agent.layers.add(id, async (dir) => {
    const image = await pullImage({
      ...options,
      image: base.image,
      auth: base.registry,
      dest: dir,
      logger: tools.logger,
    })
    await writeSandboxFiles(dir)
    // Written before the layer is renamed into place: a layer always has its config.
    const kept = { env: image.env, ...(image.workdir ? { workdir: image.workdir } : {}) }
    await mkdir(path.dirname(configFile), { recursive: true })
    await writeFile(configFile, JSON.stringify(kept))
  })
  const pulled = await readFile(configFile, 'utf8').then((text) =>
    imageConfigSchema.parse(JSON.parse(text)),
  )
  return { layers: [id], context: { ...root, ...pulled }, fromImage: true }
}

/**
 * A template's layers without its top `/.e2b` layer (run-build.ts addMetadata), which names its
 * build: a build from it writes its own above its steps, and the steps' cache keys then stay
 * the same across builds of the base that change nothing else (a fresh `sandbar serve` builds
 * base and code-interpreter-v1 anew: its Debian packages come from the cache).
 */
export function withoutMetadataLayer(layers: string[]): string[] {
  return layers.at(-1)?.startsWith(`${METADATA_LAYER_KIND}-`) ? layers.slice(0, -1) : layers
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}
