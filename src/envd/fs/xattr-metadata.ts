import { getAttribute, listAttributes, removeAttribute, setAttribute } from 'fs-xattr'

/** File metadata lives in extended attributes under this prefix (wire contract §3.3). */
export const METADATA_XATTR_PREFIX = 'user.e2b.'

/**
 * The `user.e2b.*` attributes of a path, prefix stripped. Filesystems without user xattrs
 * (and entries that vanish meanwhile) simply have no metadata.
 */
export async function readMetadata(path: string): Promise<Record<string, string>> {
  const names = await listAttributes(path).catch(() => [])
  const metadata: Record<string, string> = {}
  for (const name of names) {
    if (!name.startsWith(METADATA_XATTR_PREFIX)) continue
    const value = await getAttribute(path, name).catch(() => undefined)
    if (value !== undefined) metadata[name.slice(METADATA_XATTR_PREFIX.length)] = value.toString()
  }
  return metadata
}

/** Replaces all `user.e2b.*` attributes of a path with `metadata`. */
export async function replaceMetadata(
  path: string,
  metadata: Record<string, string>,
): Promise<void> {
  const existing = await listAttributes(path).catch(() => [])
  for (const name of existing) {
    if (name.startsWith(METADATA_XATTR_PREFIX)) await removeAttribute(path, name)
  }
  for (const [key, value] of Object.entries(metadata)) {
    await setAttribute(path, METADATA_XATTR_PREFIX + key, value)
  }
}
