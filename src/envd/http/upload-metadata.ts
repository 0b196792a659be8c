import type { IncomingHttpHeaders } from 'node:http'
import { METADATA_XATTR_PREFIX } from '../fs/xattr-metadata.js'
import { HttpError } from './http-error.js'

const HEADER_PREFIX = 'x-metadata-'
/** Linux caps an xattr name at 255 bytes; the `user.e2b.` prefix leaves 246 for the key. */
const MAX_KEY_BYTES = 255 - METADATA_XATTR_PREFIX.length
/** The per-inode budget for all metadata: prefixed keys plus values (wire contract §3.3). */
const MAX_TOTAL_BYTES = 4096
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/

/**
 * The file metadata an upload carries as `X-Metadata-<key>: <value>` headers (wire contract
 * §3.3): keys lower-cased, a header with an empty key ignored, keys and values printable
 * ASCII, each key at most 246 bytes and everything together at most 4096 bytes.
 * @throws HttpError 400 naming the offending key.
 */
export function metadataFromHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const metadata: Record<string, string> = {}
  let total = 0
  for (const [name, values] of Object.entries(headers)) {
    if (!name.toLowerCase().startsWith(HEADER_PREFIX) || values === undefined) continue
    const value = Array.isArray(values) ? values.join(', ') : values
    const key = name.slice(HEADER_PREFIX.length).toLowerCase()
    if (key === '') continue
    if (!PRINTABLE_ASCII.test(key) || !PRINTABLE_ASCII.test(value)) {
      throw new HttpError(400, `invalid metadata '${key}': keys and values must be printable ASCII`)
    }
    if (key.length > MAX_KEY_BYTES) {
      throw new HttpError(400, `invalid metadata key '${key}': longer than ${MAX_KEY_BYTES} bytes`)
    }
    total += METADATA_XATTR_PREFIX.length + key.length + value.length
    metadata[key] = value
  }
  if (total > MAX_TOTAL_BYTES) {
    throw new HttpError(
      400,
      `metadata takes ${total} bytes, more than the ${MAX_TOTAL_BYTES} allowed`,
    )
  }
  return metadata
}
