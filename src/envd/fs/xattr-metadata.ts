import {
  getAttributeSync,
  listAttributesSync,
  removeAttributeSync,
  setAttributeSync,
} from 'fs-xattr'

/** File metadata lives in extended attributes under this prefix (wire contract §3.3). */
export const METADATA_XATTR_PREFIX = 'user.e2b.'

/**
 * The `user.e2b.*` attributes of a path, prefix stripped. Filesystems without user xattrs
 * (and entries that vanish meanwhile) simply have no metadata. Synchronous, like every
 * path-based call of envd (see `asUser`).
 */
export function readMetadata(path: string): Record<string, string> {
  const metadata: Record<string, string> = {}
  for (const name of attributeNames(path)) {
    if (!name.startsWith(METADATA_XATTR_PREFIX)) continue
    try {
      metadata[name.slice(METADATA_XATTR_PREFIX.length)] = getAttributeSync(path, name).toString()
    } catch {
      // Removed between listing and reading: not metadata any more.
    }
  }
  return metadata
}

/** Replaces all `user.e2b.*` attributes of a path with `metadata`. */
export function replaceMetadata(path: string, metadata: Record<string, string>): void {
  for (const name of attributeNames(path)) {
    if (name.startsWith(METADATA_XATTR_PREFIX)) removeAttributeSync(path, name)
  }
  for (const [key, value] of Object.entries(metadata)) {
    setAttributeSync(path, METADATA_XATTR_PREFIX + key, value)
  }
}

function attributeNames(path: string): string[] {
  try {
    return listAttributesSync(path)
  } catch {
    return []
  }
}
