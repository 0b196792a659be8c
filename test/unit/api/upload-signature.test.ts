import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { requestOrigin, UploadSigner } from '../../../src/api/upload-signature.js'

const grant = { templateID: 'abc', hash: 'f'.repeat(64), expires: 1_900_000_000 }

describe('UploadSigner', () => {
  it('verifies its own signature and nothing that differs in any part or key', () => {
    const signer = new UploadSigner(randomBytes(32))
    const signature = signer.sign(grant)
    expect(signer.verify(grant, signature)).toBe(true)
    expect(signer.verify({ ...grant, templateID: 'abd' }, signature)).toBe(false)
    expect(signer.verify({ ...grant, hash: 'e'.repeat(64) }, signature)).toBe(false)
    expect(signer.verify({ ...grant, expires: grant.expires + 1 }, signature)).toBe(false)
    expect(signer.verify(grant, signature.slice(2))).toBe(false)
    expect(signer.verify(grant, 'not hex')).toBe(false)
    expect(new UploadSigner(randomBytes(32)).verify(grant, signature)).toBe(false)
  })
})

describe('requestOrigin', () => {
  it('uses the Host header and X-Forwarded-Proto, else the request URL', () => {
    expect(requestOrigin('http://localhost/x', {})).toBe('http://localhost')
    expect(requestOrigin('http://localhost/x', { host: '127.0.0.1:3000' })).toBe(
      'http://127.0.0.1:3000',
    )
    expect(requestOrigin('http://localhost/x', { host: 'api.d.test', proto: 'https, http' })).toBe(
      'https://api.d.test',
    )
    expect(requestOrigin('https://api.d.test/x', {})).toBe('https://api.d.test')
    expect(requestOrigin('http://h/x', { proto: 'javascript' })).toBe('http://h')
  })
})
