import { describe, expect, it } from 'vitest'
import { FetchHeaders } from '../../../src/envd/fetch-headers.js'

// Node's own Headers (undici's) is the reference: every case runs on both and must agree.
type Step = (headers: Headers) => unknown
type Init = ConstructorParameters<typeof Headers>[0]

/** What a Headers shows after `steps`, or the error a step threw. */
function outcome(make: () => Headers, steps: Step[]): unknown {
  try {
    const headers = make()
    const results = steps.map((step) => step(headers))
    return {
      results,
      entries: [...headers],
      keys: [...headers.keys()],
      values: [...headers.values()],
      setCookies: headers.getSetCookie(),
    }
  } catch (error) {
    return { threw: (error as Error).name }
  }
}

function expectSameAsNode(init: unknown, steps: Step[] = []) {
  const ours = outcome(() => new FetchHeaders(init as Init), steps)
  const node = outcome(() => new Headers(init as Init), steps)
  expect(ours).toEqual(node)
}

describe('FetchHeaders, beside Node’s Headers', () => {
  it.each([
    ['nothing', undefined],
    ['a record', { 'Content-Type': 'application/json', 'x-b': '2', 'X-A': '1' }],
    [
      'pairs',
      [
        ['Accept', 'a'],
        ['accept', 'b'],
        ['Connect-Protocol-Version', '1'],
      ],
    ],
    [
      'another Headers',
      new Headers([
        ['x-one', '1'],
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ]),
    ],
    ['a Map', new Map([['grpc-status', '0']])],
    ['values with outer whitespace', { 'x-pad': ' \t padded value \r\n' }],
    ['an array value in a record', { 'x-list': ['a', 'b'] }],
    ['a name with a space', { 'bad name': 'x' }],
    ['a name with a colon', [['x:y', '1']]],
    ['an empty name', [['', '1']]],
    ['a value with a newline inside', { 'x-split': 'a\nb' }],
    ['a value with a NUL', { 'x-nul': 'a\0b' }],
    ['a pair of three', [['a', 'b', 'c']]],
    ['a pair of one', [['a']]],
    ['a string as a pair', ['ab']],
    ['a string', 'x-a: 1'],
  ])('constructs from %s as Node does', (_, init) => {
    expectSameAsNode(init)
  })

  it('appends, sets, deletes and reads as Node does, names in any case', () => {
    expectSameAsNode({ 'Content-Type': 'text/plain' }, [
      (h) => h.append('X-Multi', 'one'),
      (h) => h.append('x-multi', ' two '),
      (h) => h.get('X-MULTI'),
      (h) => h.has('x-multi'),
      (h) => h.set('content-type', 'application/connect+json'),
      (h) => h.get('Content-Type'),
      (h) => h.delete('X-Multi'),
      (h) => h.has('x-multi'),
      (h) => h.get('absent'),
      (h) => h.append('Set-Cookie', 'a=1; Path=/'),
      (h) => h.append('set-cookie', 'b=2'),
      (h) => h.get('set-cookie'),
      (h) => h.append('Zeta', ''),
      (h) => h.append('alpha', '1'),
    ])
  })

  it('sorts names by code unit, not by locale', () => {
    expectSameAsNode([
      ['b', '1'],
      ['B-a', '2'],
      ['a_b', '3'],
      ['a-b', '4'],
      ['A', '5'],
      ['~', '6'],
      ['0', '7'],
    ])
  })

  it.each([
    ['get', (h: Headers) => h.get('bad name')],
    ['has', (h: Headers) => h.has('bad(name)')],
    ['delete', (h: Headers) => h.delete('')],
    ['set a bad value', (h: Headers) => h.set('x', 'a\rb')],
    ['append a bad name', (h: Headers) => h.append('é', 'x')],
  ])('throws where Node throws: %s', (_, step) => {
    expectSameAsNode({ 'x-kept': '1' }, [step])
  })

  it('calls forEach with value, name and the headers, in order', () => {
    const seen: unknown[] = []
    const headers = new FetchHeaders([
      ['x-b', '2'],
      ['x-a', '1'],
    ])
    headers.forEach(function (this: unknown, value, name, parent) {
      seen.push([value, name, parent === headers, this])
    }, 'this')
    expect(seen).toEqual([
      ['1', 'x-a', true, 'this'],
      ['2', 'x-b', true, 'this'],
    ])
    expect(Object.prototype.toString.call(headers)).toBe('[object Headers]')
  })
})
