import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'

/** What a build takes from the base image's config (OCI image spec, `config`). */
export interface ImageConfig {
  env: Record<string, string>
  workdir?: string
  user?: string
}

const indexSchema = z.object({ manifests: z.array(z.object({ digest: z.string() })).min(1) })
const manifestSchema = z.object({ config: z.object({ digest: z.string() }) })
const configSchema = z.object({
  config: z
    .object({
      Env: z.array(z.string()).nullish(),
      WorkingDir: z.string().nullish(),
      User: z.string().nullish(),
    })
    .nullish(),
})

/** Turns the config's `KEY=value` list into a record; a later duplicate wins, as in Docker. */
export function envRecord(list: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {}
  for (const entry of list) {
    const equals = entry.indexOf('=')
    if (equals > 0) env[entry.slice(0, equals)] = entry.slice(equals + 1)
    else if (equals === -1 && entry !== '') env[entry] = ''
  }
  return env
}

async function readBlob(layout: string, digest: string): Promise<unknown> {
  const [algorithm, hex] = digest.split(':')
  if (algorithm === undefined || hex === undefined || !/^[a-z0-9]+$/.test(algorithm + hex)) {
    throw new Error(`invalid blob digest ${digest}`)
  }
  return JSON.parse(await readFile(path.join(layout, 'blobs', algorithm, hex), 'utf8'))
}

/** Reads the config of the single image in an OCI layout that skopeo wrote. */
export async function readLayoutConfig(layout: string): Promise<ImageConfig> {
  const index = indexSchema.parse(
    JSON.parse(await readFile(path.join(layout, 'index.json'), 'utf8')),
  )
  const [image] = index.manifests
  if (image === undefined) throw new Error('the OCI layout holds no image')
  const manifest = manifestSchema.parse(await readBlob(layout, image.digest))
  const { config } = configSchema.parse(await readBlob(layout, manifest.config.digest))
  const result: ImageConfig = { env: envRecord(config?.Env ?? []) }
  if (config?.WorkingDir) result.workdir = config.WorkingDir
  if (config?.User) result.user = config.User
  return result
}
