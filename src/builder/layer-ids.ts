import { randomBytes } from 'node:crypto'

/**
 * A layer's ID from its cache key: a kind letter and 32 hex characters of the key, short
 * enough that deep stacks fit one overlay mount (agent layer-store.ts). A forced rebuild gets
 * a fresh random ID, so it never collides with the cached layer it replaces.
 */
export function layerID(kind: string, key: string, fresh = false): string {
  const hex = fresh ? randomBytes(16).toString('hex') : key.slice(0, 32)
  return `${kind}-${hex}`
}

/** The kind of the layer holding a build's `/.e2b` (template and build IDs), always on top. */
export const METADATA_LAYER_KIND = 'e'
