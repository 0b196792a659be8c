import { describe, expect, it } from 'vitest'
import { resultFields, stripQuotes } from '../../../../src/interpreter/server/result-fields.js'

describe('result fields (wire contract §1.5)', () => {
  it('maps every known MIME key to its field and the rest into extra', () => {
    const chart = { type: 'bar', title: null, elements: [] }
    expect(
      resultFields({
        'text/plain': "'hi'",
        'text/html': '<b>x</b>',
        'text/markdown': '# x',
        'image/svg+xml': '<svg/>',
        'image/png': 'iVBOR',
        'image/jpeg': '/9j/',
        'application/pdf': 'JVBER',
        'text/latex': '$x$',
        'application/json': { a: [1] },
        'application/javascript': 'alert(1)',
        'e2b/data': { col: [1, 2] },
        'e2b/chart': chart,
        'application/vnd.custom': 'kept',
      }),
    ).toEqual({
      text: 'hi',
      html: '<b>x</b>',
      markdown: '# x',
      svg: '<svg/>',
      png: 'iVBOR',
      jpeg: '/9j/',
      pdf: 'JVBER',
      latex: '$x$',
      json: { a: [1] },
      javascript: 'alert(1)',
      data: { col: [1, 2] },
      chart,
      extra: { 'application/vnd.custom': 'kept' },
    })
  })

  it('strips only quotes that wrap the whole text', () => {
    expect(stripQuotes("'/home/user'")).toBe('/home/user')
    expect(stripQuotes('"x"')).toBe('x')
    expect(stripQuotes(`'a' + "b"`)).toBe(`'a' + "b"`)
    expect(stripQuotes('\'a"')).toBe('\'a"')
    expect(stripQuotes("'")).toBe("'")
    expect(stripQuotes('[ 1, 2 ]')).toBe('[ 1, 2 ]')
  })
})
