import { createHash, timingSafeEqual } from 'node:crypto'

/** What a request's traffic token says about its right to reach a private sandbox port. */
export type TokenVerdict = 'valid' | 'missing' | 'invalid'

/**
 * Compares a presented secret with the expected one in constant time. Both sides are hashed
 * first so that neither the content nor the length of the secret leaks through timing.
 */
export function secretsEqual(expected: string, presented: string): boolean {
  const a = createHash('sha256').update(expected).digest()
  const b = createHash('sha256').update(presented).digest()
  return timingSafeEqual(a, b)
}

/**
 * The verdict on the `e2b-traffic-access-token` header (wire contract §4.6): no header is
 * `missing`, an empty or different one `invalid`, the sandbox's own token `valid`.
 */
export function trafficTokenVerdict(
  expected: string,
  presented: string | string[] | undefined,
): TokenVerdict {
  if (presented === undefined) return 'missing'
  const value = Array.isArray(presented) ? presented.join(', ') : presented
  return secretsEqual(expected, value) ? 'valid' : 'invalid'
}
