import { createHash, randomBytes } from 'node:crypto'

/** Wire contract §1.1: every team API key starts with this prefix. */
export const API_KEY_PREFIX = 'e2b_'

/** Wire contract §1.1: 20 random bytes, written as 40 lowercase hex characters. */
const KEY_BYTES = 20
const KEY_PATTERN = /^e2b_([0-9a-f]{40})$/

/** How a key is shown after creation: `IdentifierMaskingDetails` of wire contract §1.3. */
export interface ApiKeyMask {
  prefix: string
  valueLength: number
  maskedValuePrefix: string
  maskedValueSuffix: string
}

/** A freshly generated key: the plaintext (shown once), its stored hash and its mask. */
export interface GeneratedApiKey {
  key: string
  hash: string
  mask: ApiKeyMask
}

/** Generates `e2b_` + 40 hex from 20 random bytes, as E2B's `keys.GenerateKey` does. */
export function generateApiKey(): GeneratedApiKey {
  const bytes = randomBytes(KEY_BYTES)
  const value = bytes.toString('hex')
  return { key: API_KEY_PREFIX + value, hash: hashKeyBytes(bytes), mask: maskApiKeyValue(value) }
}

/**
 * The stored hash of a plaintext key, or undefined when the key is malformed (such a key can
 * match nothing, so callers skip the lookup).
 */
export function hashApiKey(key: string): string | undefined {
  const value = KEY_PATTERN.exec(key)?.[1]
  return value === undefined ? undefined : hashKeyBytes(Buffer.from(value, 'hex'))
}

/**
 * Wire contract §1.1: `$sha256$` + base64 (standard alphabet, no padding) of sha256 over the
 * decoded key bytes, so hashes stay compatible with keys moved to or from E2B's own database.
 */
function hashKeyBytes(bytes: Buffer): string {
  const digest = createHash('sha256').update(bytes).digest('base64')
  return `$sha256$${digest.replace(/=+$/, '')}`
}

/** Wire contract §1.3 `IdentifierMaskingDetails`: 2-char prefix, 4-char suffix of the hex part. */
export function maskApiKeyValue(value: string): ApiKeyMask {
  return {
    prefix: API_KEY_PREFIX,
    valueLength: value.length,
    maskedValuePrefix: value.slice(0, 2),
    maskedValueSuffix: value.slice(-4),
  }
}
