import { describe, expect, it } from 'vitest'
import { negotiateEncoding, requestBodyCoding } from '../../../../src/envd/http/content-coding.js'

describe('negotiateEncoding', () => {
  it('is identity without a header', () => {
    expect(negotiateEncoding(undefined)).toBe('identity')
    expect(negotiateEncoding('')).toBe('identity')
  })

  it('uses gzip when the client prefers it, as the SDK asks with gzip: true', () => {
    expect(negotiateEncoding('gzip')).toBe('gzip')
    expect(negotiateEncoding('x-gzip')).toBe('gzip')
    expect(negotiateEncoding('GZIP, br;q=0.8')).toBe('gzip')
  })

  it('sends identity when gzip is one of equals, as fetch adds to every request', () => {
    expect(negotiateEncoding('gzip, deflate')).toBe('identity')
    expect(negotiateEncoding('gzip, deflate, br, zstd')).toBe('identity')
    expect(negotiateEncoding('br, GZIP;q=0.8')).toBe('identity')
  })

  it('follows quality values', () => {
    expect(negotiateEncoding('gzip;q=0.5, identity')).toBe('identity')
    expect(negotiateEncoding('identity;q=0.2, gzip;q=0.9')).toBe('gzip')
    expect(negotiateEncoding('gzip;q=0')).toBe('identity')
  })

  it('treats * as identity unless identity is refused', () => {
    expect(negotiateEncoding('*')).toBe('identity')
    expect(negotiateEncoding('identity;q=0, *')).toBe('gzip')
  })

  it('falls back to identity for unknown codings, and gives up when identity is refused', () => {
    expect(negotiateEncoding('br, deflate')).toBe('identity')
    expect(negotiateEncoding('br, identity;q=0')).toBeUndefined()
    expect(negotiateEncoding('*;q=0, identity;q=0')).toBeUndefined()
  })
})

describe('requestBodyCoding', () => {
  it('decodes gzip and passes identity through', () => {
    expect(requestBodyCoding(undefined)).toBe('identity')
    expect(requestBodyCoding('identity')).toBe('identity')
    expect(requestBodyCoding('GZIP')).toBe('gzip')
    expect(requestBodyCoding('br')).toBeUndefined()
  })
})
