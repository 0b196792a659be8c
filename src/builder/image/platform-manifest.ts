import { createHash } from 'node:crypto'
import { z } from 'zod'

/** An OCI/Docker platform name (`amd64`, `arm64`), as image indexes spell architectures. */
export type Architecture = string

/** The host's architecture in image-index terms (Node's `x64` is `amd64`). */
export function hostArchitecture(arch: string = process.arch): Architecture {
  const names: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386' }
  return names[arch] ?? arch
}

const indexSchema = z.object({
  manifests: z.array(
    z.object({
      digest: z.string(),
      platform: z.object({ architecture: z.string(), os: z.string() }).optional(),
    }),
  ),
})

/**
 * The digest of the image manifest for `architecture` on Linux, from the raw manifest a
 * registry serves for a reference: for an OCI index or Docker manifest list, the matching
 * entry's digest; for a single image manifest, its own digest (sha256 of its exact bytes).
 */
export function platformManifestDigest(raw: Buffer, architecture: Architecture): string {
  const parsed: unknown = JSON.parse(raw.toString('utf8'))
  const index = indexSchema.safeParse(parsed)
  if (!index.success) return `sha256:${createHash('sha256').update(raw).digest('hex')}`
  const entry = index.data.manifests.find(
    (manifest) =>
      manifest.platform?.os === 'linux' && manifest.platform.architecture === architecture,
  )
  if (entry === undefined) {
    const offered = index.data.manifests
      .map((manifest) => `${manifest.platform?.os}/${manifest.platform?.architecture}`)
      .join(', ')
    throw new Error(`the image has no linux/${architecture} variant (it has ${offered})`)
  }
  return entry.digest
}
