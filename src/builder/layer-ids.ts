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

/**
 * The kind of a snapshot's layer (the api's `POST /sandboxes/{id}/snapshots` and fork): what
 * the sandbox wrote, saved by the agent beside its processes. Always fresh: a snapshot has no
 * cache key.
 */
export const SNAPSHOT_LAYER_KIND = 'c'
