import { describe, expect, it } from 'vitest'
import { parseByteRange } from '../../../../src/envd/http/byte-range.js'

describe('parseByteRange', () => {
  it('reads first-last, open-ended and suffix ranges', () => {
    expect(parseByteRange('bytes=0-4', 13)).toEqual({ start: 0, end: 4 })
    expect(parseByteRange('bytes=7-', 13)).toEqual({ start: 7, end: 12 })
    expect(parseByteRange('bytes=-6', 13)).toEqual({ start: 7, end: 12 })
  })

  it('clamps the end and an oversized suffix to the file', () => {
    expect(parseByteRange('bytes=7-100', 13)).toEqual({ start: 7, end: 12 })
    expect(parseByteRange('bytes=-100', 13)).toEqual({ start: 0, end: 12 })
  })

  it('is unsatisfiable past the end of the file', () => {
    expect(parseByteRange('bytes=13-', 13)).toBe('unsatisfiable')
    expect(parseByteRange('bytes=0-', 0)).toBe('unsatisfiable')
    expect(parseByteRange('bytes=-0', 13)).toBe('unsatisfiable')
  })

  it('ignores what it does not serve: no header, other units, several ranges, bad syntax', () => {
    expect(parseByteRange(undefined, 13)).toBeUndefined()
    expect(parseByteRange('items=0-1', 13)).toBeUndefined()
    expect(parseByteRange('bytes=0-1,3-4', 13)).toBeUndefined()
    expect(parseByteRange('bytes=5-2', 13)).toBeUndefined()
    expect(parseByteRange('bytes=-', 13)).toBeUndefined()
  })
})
