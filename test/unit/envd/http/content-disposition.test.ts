import { describe, expect, it } from 'vitest'
import { inlineContentDisposition } from '../../../../src/envd/http/content-disposition.js'

describe('inlineContentDisposition', () => {
  it('leaves a token bare', () => {
    expect(inlineContentDisposition('report-1.txt')).toBe('inline; filename=report-1.txt')
  })

  it('quotes other ASCII, escaping quotes and backslashes', () => {
    expect(inlineContentDisposition('my file.txt')).toBe('inline; filename="my file.txt"')
    expect(inlineContentDisposition('a"b\\c')).toBe('inline; filename="a\\"b\\\\c"')
  })

  it('uses RFC 5987 for non-ASCII names', () => {
    expect(inlineContentDisposition('naïve (1).txt')).toBe(
      "inline; filename*=utf-8''na%C3%AFve%20%281%29.txt",
    )
  })
})
