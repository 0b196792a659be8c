/** An inclusive byte range of a file, as `Range: bytes=start-end` names it. */
export interface ByteRange {
  start: number
  end: number
}

/**
 * Reads a `Range` header against a file of `size` bytes (RFC 9110 §14.1.2). envd serves one
 * range; a header it does not understand, or one asking for several ranges, is ignored and
 * the whole file is sent, which the RFC permits.
 * @returns the range, `'unsatisfiable'` for a `416`, or undefined to send everything.
 */
export function parseByteRange(
  header: string | undefined,
  size: number,
): ByteRange | 'unsatisfiable' | undefined {
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header ?? '')
  if (!match) return undefined
  const [, first = '', last = ''] = match
  if (first === '' && last === '') return undefined
  if (first === '') {
    const suffix = Number(last)
    if (suffix === 0 || size === 0) return 'unsatisfiable'
    return { start: Math.max(size - suffix, 0), end: size - 1 }
  }
  const start = Number(first)
  if (start >= size) return 'unsatisfiable'
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1)
  if (end < start) return undefined
  return { start, end }
}
