import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { generateApiKey, hashApiKey, maskApiKeyValue } from '../../../src/store/api-key.js'

/** The contract's formula (wire contract §1.1), written out independently of api-key.ts. */
function contractHash(key: string): string {
  const bytes = Buffer.from(key.slice('e2b_'.length), 'hex')
  const base64 = createHash('sha256').update(bytes).digest().toString('base64')
  return `$sha256$${base64.replace(/=/g, '')}`
}

describe('generateApiKey', () => {
  it('makes e2b_ + 40 lowercase hex, different every time', () => {
    const keys = Array.from({ length: 50 }, () => generateApiKey().key)
    for (const key of keys) expect(key).toMatch(/^e2b_[0-9a-f]{40}$/)
    expect(new Set(keys).size).toBe(keys.length)
  })

  it('hashes the decoded key bytes as the contract says', () => {
    const { key, hash } = generateApiKey()
    expect(hash).toBe(contractHash(key))
    expect(hash).toMatch(/^\$sha256\$[A-Za-z0-9+/]{43}$/)
    expect(hashApiKey(key)).toBe(hash)
  })

  it('masks the hex part: 2-char prefix, 4-char suffix, its length', () => {
    const { key, mask } = generateApiKey()
    const value = key.slice(4)
    expect(mask).toEqual({
      prefix: 'e2b_',
      valueLength: 40,
      maskedValuePrefix: value.slice(0, 2),
      maskedValueSuffix: value.slice(36),
    })
  })
})

describe('hashApiKey', () => {
  it('matches a known vector', () => {
    // Twenty zero bytes; the digest comes from `xxd -r -p | openssl dgst -sha256 -binary | base64`.
    const key = `e2b_${'00'.repeat(20)}`
    expect(hashApiKey(key)).toBe('$sha256$3kfJsn640wDbtfLDU+Yyw5MmLPBjQMT6fxtAxMvTb5A')
    expect(hashApiKey(key)).toBe(contractHash(key))
  })

  it.each([
    ['empty', ''],
    ['no prefix', '0'.repeat(40)],
    ['wrong prefix', `sk_e2b_${'0'.repeat(40)}`],
    ['too short', `e2b_${'0'.repeat(39)}`],
    ['too long', `e2b_${'0'.repeat(42)}`],
    ['upper case', `e2b_${'A'.repeat(40)}`],
    ['not hex', `e2b_${'g'.repeat(40)}`],
    ['trailing newline', `e2b_${'0'.repeat(40)}\n`],
  ])('refuses a malformed key (%s)', (_, key) => {
    expect(hashApiKey(key)).toBeUndefined()
  })
})

describe('maskApiKeyValue', () => {
  it('keeps the first 2 and last 4 characters', () => {
    expect(maskApiKeyValue('0123456789abcdef0123456789abcdef01234567')).toEqual({
      prefix: 'e2b_',
      valueLength: 40,
      maskedValuePrefix: '01',
      maskedValueSuffix: '4567',
    })
  })
})
