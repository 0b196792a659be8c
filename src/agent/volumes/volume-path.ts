/**
 * A content API path as the components below the volume root (wave2-contracts §2.3: the server
 * makes the path absolute and normalises it; `/` is the root). `..` is resolved here, by name,
 * and stops at the root: no `..` ever reaches the kernel, so none can climb out of the volume.
 * Pure.
 */
export function volumePathSegments(path: string): string[] {
  if (path.includes('\0')) throw new RangeError('a path cannot hold a NUL byte')
  const segments: string[] = []
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue
    if (part === '..') segments.pop()
    else segments.push(part)
  }
  return segments
}

/** The absolute path of `segments` inside the volume, as replies and messages show it. */
export function volumePathText(segments: readonly string[]): string {
  return `/${segments.join('/')}`
}
