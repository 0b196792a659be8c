import { describe, expect, it } from 'vitest'
import {
  decodeSandboxCursor,
  encodeSandboxCursor,
  InvalidNextTokenError,
  type SandboxCursor,
} from '../../../src/store/sandbox-cursor.js'

const goBase64Url = (text: string) =>
  Buffer.from(text).toString('base64').replaceAll('+', '-').replaceAll('/', '_')

describe('sandbox cursor', () => {
  it.each<SandboxCursor>([
    {
      startedAt: new Date('2026-11-21T14:32:57.123Z'),
      sandboxID: 'i62mff4ahtrdfdkyn2esc',
      order: 'desc',
    },
    { startedAt: new Date('2026-11-21T14:32:57.000Z'), sandboxID: 'abc123', order: 'asc' },
    { startedAt: new Date('1970-01-01T00:00:00.001Z'), sandboxID: 'a', order: 'desc' },
  ])('round-trips $sandboxID ($order)', (cursor) => {
    expect(decodeSandboxCursor(encodeSandboxCursor(cursor))).toEqual(cursor)
  })

  it("writes E2B's format: URL-safe base64 of RFC3339Nano__id[__asc]", () => {
    const startedAt = new Date('2026-11-21T14:32:57.120Z')
    expect(encodeSandboxCursor({ startedAt, sandboxID: 'isbx', order: 'desc' })).toBe(
      goBase64Url('2026-11-21T14:32:57.12Z__isbx'),
    )
    expect(
      encodeSandboxCursor({
        startedAt: new Date('2026-11-21T14:32:57Z'),
        sandboxID: 'x',
        order: 'asc',
      }),
    ).toBe(goBase64Url('2026-11-21T14:32:57Z__x__asc'))
  })

  it('reads nanosecond timestamps as E2B writes them, to the millisecond', () => {
    const token = goBase64Url('2026-11-21T14:32:57.123456789Z__isbx')
    expect(decodeSandboxCursor(token)).toEqual({
      startedAt: new Date('2026-11-21T14:32:57.123Z'),
      sandboxID: 'isbx',
      order: 'desc',
    })
  })

  it.each([
    ['empty', ''],
    ['not base64', '!!!!'],
    ['base64 with a stray character', `${goBase64Url('2026-11-21T14:32:57Z__isbx')}*`],
    ['standard alphabet', '+/+/'],
    ['no separator', goBase64Url('2026-11-21T14:32:57Z')],
    ['no ID', goBase64Url('2026-11-21T14:32:57Z__')],
    ['bad ID', goBase64Url('2026-11-21T14:32:57Z__ISBX')],
    ['bad direction', goBase64Url('2026-11-21T14:32:57Z__isbx__up')],
    ['too many parts', goBase64Url('2026-11-21T14:32:57Z__isbx__asc__x')],
    ['bad time', goBase64Url('yesterday__isbx')],
    ['impossible date', goBase64Url('2026-02-31T00:00:00Z__isbx')],
    ['offset time', goBase64Url('2026-11-21T14:32:57+01:00__isbx')],
    ['hour 24', goBase64Url('2026-11-21T24:00:00Z__isbx')],
  ])('rejects garbage (%s)', (_, token) => {
    expect(() => decodeSandboxCursor(token)).toThrow(InvalidNextTokenError)
  })
})
