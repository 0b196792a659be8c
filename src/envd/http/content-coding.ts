/** The codings envd's file routes speak (wire contract §3.3): gzip, and identity. */
export type ContentCoding = 'gzip' | 'identity'

/** What a `406` says when nothing acceptable remains. */
export const NO_ACCEPTABLE_ENCODING = 'no acceptable encoding found, supported: [identity, gzip]'

interface Weighted {
  coding: string
  quality: number
}

function parseWeighted(element: string): Weighted {
  const [name = '', ...params] = element.split(';')
  let quality = 1
  for (const param of params) {
    const match = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(param)
    if (match?.[1] !== undefined) quality = Math.min(Math.max(Number(match[1]) || 0, 0), 1)
  }
  return { coding: name.trim().toLowerCase(), quality }
}

/**
 * The response coding for an `Accept-Encoding` value. gzip is used when the client prefers
 * it: weighted above every other acceptable coding, identity included (`gzip` alone, as the
 * SDK's `gzip: true` sends it), or when identity is refused. A list of equals, such as the
 * `gzip, deflate` that fetch adds to every request, gets identity: RFC 9110 §12.5.3 leaves
 * the choice to the server, and compressing costs ~50 MiB/s of CPU per stream against
 * GiB/s for the plain file. E2B's envd picks gzip from such a list; the SDK decodes either.
 * @returns undefined when nothing acceptable remains (a `406`).
 */
export function negotiateEncoding(acceptEncoding: string | undefined): ContentCoding | undefined {
  if (acceptEncoding === undefined || acceptEncoding.trim() === '') return 'identity'
  const offers = acceptEncoding
    .split(',')
    .filter((element) => element.trim() !== '')
    .map(parseWeighted)
  const acceptable = offers.filter((o) => o.quality > 0)
  const gzip = acceptable.find((o) => o.coding === 'gzip' || o.coding === 'x-gzip')
  const identityRefused = offers.some(
    (o) =>
      (o.coding === 'identity' || (o.coding === '*' && !offers.some(isIdentity))) &&
      o.quality === 0,
  )
  if (identityRefused) {
    return gzip || acceptable.some((o) => o.coding === '*') ? 'gzip' : undefined
  }
  if (gzip === undefined) return 'identity'
  const preferred = acceptable.every((o) => o === gzip || o.quality < gzip.quality)
  return preferred ? 'gzip' : 'identity'
}

function isIdentity(offer: Weighted): boolean {
  return offer.coding === 'identity'
}

/**
 * The coding of an upload's body from its `Content-Encoding` (wire contract §3.3: gzip is
 * decompressed, identity passes through).
 * @returns undefined for a coding envd cannot decode (a `400`).
 */
export function requestBodyCoding(contentEncoding: string | undefined): ContentCoding | undefined {
  const coding = parseWeighted(contentEncoding ?? '').coding
  if (coding === '' || coding === 'identity') return 'identity'
  if (coding === 'gzip' || coding === 'x-gzip') return 'gzip'
  return undefined
}
