import { describe, expect, it } from 'vitest'
import { HttpError } from '../../../../src/envd/http/http-error.js'
import { metadataFromHeaders } from '../../../../src/envd/http/upload-metadata.js'

function parse(headers: Record<string, string>): Record<string, string> {
  return metadataFromHeaders(headers)
}

function rejection(headers: Record<string, string>): HttpError {
  try {
    parse(headers)
  } catch (error) {
    if (error instanceof HttpError) return error
    throw error
  }
  throw new Error('expected metadata to be rejected')
}

describe('metadataFromHeaders', () => {
  it('reads X-Metadata-* headers, keys lower-cased, other headers ignored', () => {
    expect(
      parse({
        'X-Metadata-Author': 'mish',
        'x-metadata-PURPOSE': 'upload',
        'Content-Type': 'application/octet-stream',
      }),
    ).toEqual({ author: 'mish', purpose: 'upload' })
  })

  it('is empty without metadata headers and ignores an empty key', () => {
    expect(parse({ 'X-Access-Token': 'abc' })).toEqual({})
    expect(parse({ 'X-Metadata-': 'ignored' })).toEqual({})
  })

  it('keeps printable ASCII values, spaces and symbols included', () => {
    expect(parse({ 'X-Metadata-note': 'a b ~!@#$%^&*()' })).toEqual({ note: 'a b ~!@#$%^&*()' })
  })

  it('rejects a value outside printable ASCII', () => {
    expect(() => parse({ 'x-metadata-name': 'caf\u00e9' })).toThrow(/printable ASCII/)
  })

  it('allows a 246-byte key and rejects a 247-byte one', () => {
    expect(Object.keys(parse({ [`X-Metadata-${'k'.repeat(246)}`]: 'v' }))).toHaveLength(1)
    const error = rejection({ [`X-Metadata-${'k'.repeat(247)}`]: 'v' })
    expect(error.status).toBe(400)
    expect(error.message).toMatch(/longer than 246 bytes/)
  })

  it('caps prefixed keys plus values at 4096 bytes', () => {
    // Each entry costs 9 ("user.e2b.") + 1 (key) + value bytes.
    const fits = { 'X-Metadata-a': 'v'.repeat(2038), 'X-Metadata-b': 'v'.repeat(2038) }
    expect(Object.keys(parse(fits))).toEqual(['a', 'b'])
    const error = rejection({ 'X-Metadata-a': 'v'.repeat(2038), 'X-Metadata-b': 'v'.repeat(2039) })
    expect(error.status).toBe(400)
    expect(error.message).toMatch(/4097 bytes/)
  })
})
