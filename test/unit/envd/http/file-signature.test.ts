import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { fileSignature, signaturesEqual } from '../../../../src/envd/http/file-signature.js'

/** The wire contract's formula (§3.2), spelled out independently of the implementation. */
function expectedSignature(text: string): string {
  return `v1_${createHash('sha256').update(text).digest('base64').replace(/=+$/, '')}`
}

describe('fileSignature', () => {
  it('signs path, operation, user and token', () => {
    const input = {
      path: '/home/user/a.txt',
      operation: 'read' as const,
      username: 'user',
      accessToken: 'tok',
    }
    expect(fileSignature(input)).toBe(expectedSignature('/home/user/a.txt:read:user:tok'))
  })

  it('appends the expiration when the URL carries one', () => {
    const signature = fileSignature({
      path: 'a.txt',
      operation: 'write',
      username: '',
      accessToken: 'tok',
      expiration: 1700000000,
    })
    expect(signature).toBe(expectedSignature('a.txt:write::tok:1700000000'))
  })

  it('uses standard base64 without padding', () => {
    // sha256 is 32 bytes: base64 is 44 characters with one '=' of padding, 43 without.
    const signature = fileSignature({ path: '', operation: 'read', username: '', accessToken: 'x' })
    expect(signature).toMatch(/^v1_[A-Za-z0-9+/]{43}$/)
  })

  it('matches the SDK computing it with WebCrypto and btoa', async () => {
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode('f.txt:read::s'))
    const sdkStyle = `v1_${btoa(String.fromCharCode(...new Uint8Array(digest))).replace(/=+$/, '')}`
    const input = { path: 'f.txt', operation: 'read' as const, username: '', accessToken: 's' }
    expect(fileSignature(input)).toBe(sdkStyle)
  })
})

describe('signaturesEqual', () => {
  it('compares whole strings', () => {
    expect(signaturesEqual('v1_abc', 'v1_abc')).toBe(true)
    expect(signaturesEqual('v1_abc', 'v1_abd')).toBe(false)
    expect(signaturesEqual('v1_ab', 'v1_abc')).toBe(false)
  })
})
