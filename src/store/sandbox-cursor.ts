/** Sort order of a sandbox list: by start time, newest first by default (wire contract §1.2). */
export type SandboxOrder = 'asc' | 'desc'

/** Where the next page of a sandbox list starts: the last row of the previous page. */
export interface SandboxCursor {
  startedAt: Date
  sandboxID: string
  order: SandboxOrder
}

/** A `nextToken` that no list of ours produced, or one produced for the other sort order. */
export class InvalidNextTokenError extends Error {
  override readonly name = 'InvalidNextTokenError'
}

const BASE64URL = /^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}==|[A-Za-z0-9_-]{3}=)?$/
const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/
const SANDBOX_ID = /^[a-z0-9]+$/

/**
 * Wire contract §1.1: the cursor is URL-safe base64 (with padding, Go's `base64.URLEncoding`)
 * of `"<RFC3339Nano started_at>__<id>"`, with a `__asc` suffix for ascending lists.
 */
export function encodeSandboxCursor(cursor: SandboxCursor): string {
  const parts = [formatRfc3339Nano(cursor.startedAt), cursor.sandboxID]
  if (cursor.order === 'asc') parts.push('asc')
  return Buffer.from(parts.join('__')).toString('base64').replaceAll('+', '-').replaceAll('/', '_')
}

/** Decodes a `nextToken`; throws InvalidNextTokenError for anything we did not produce. */
export function decodeSandboxCursor(token: string): SandboxCursor {
  // Buffer's decoder skips characters outside the alphabet, so check the shape first.
  if (!BASE64URL.test(token)) throw new InvalidNextTokenError('invalid next token: not base64')
  const parts = Buffer.from(token, 'base64url').toString('utf8').split('__')
  const [time, sandboxID, direction] = parts
  if (parts.length > 3 || time === undefined || sandboxID === undefined) {
    throw new InvalidNextTokenError('invalid next token: invalid cursor format')
  }
  if (!SANDBOX_ID.test(sandboxID)) throw new InvalidNextTokenError('invalid next token: bad ID')
  if (direction !== undefined && direction !== 'asc') {
    throw new InvalidNextTokenError('invalid next token: unknown sort order')
  }
  return { startedAt: parseRfc3339(time), sandboxID, order: direction === 'asc' ? 'asc' : 'desc' }
}

/** Go's `time.RFC3339Nano` in UTC: the fraction loses its trailing zeros, or goes entirely. */
function formatRfc3339Nano(date: Date): string {
  return date
    .toISOString()
    .replace(/\.(\d*?)0*Z$/, (_, digits: string) => (digits === '' ? 'Z' : `.${digits}Z`))
}

/** Parses the UTC timestamps that formatRfc3339Nano writes; the store keeps milliseconds. */
function parseRfc3339(text: string): Date {
  const match = RFC3339.exec(text)
  if (match === null) throw new InvalidNextTokenError('invalid next token: bad timestamp')
  const iso = `${match[1]}.${(match[2] ?? '').padEnd(3, '0').slice(0, 3)}Z`
  const millis = Date.parse(iso)
  // A real timestamp reads back unchanged; 31 February does not.
  if (Number.isNaN(millis) || new Date(millis).toISOString() !== iso) {
    throw new InvalidNextTokenError('invalid next token: bad timestamp')
  }
  return new Date(millis)
}
