import { describe, expect, test } from 'vitest'
import { keepaliveIntervalMs } from '../../../../src/envd/fs/watch-stream.js'

describe('keepaliveIntervalMs', () => {
  test('reads seconds from the Keepalive-Ping-Interval header', () => {
    expect(keepaliveIntervalMs('50')).toBe(50_000)
    expect(keepaliveIntervalMs(' 2 ')).toBe(2_000)
    expect(keepaliveIntervalMs('0.5')).toBe(500)
  })

  test.each([null, '', 'soon', '0', '-3'])('falls back to 90 s for %j', (header) => {
    expect(keepaliveIntervalMs(header)).toBe(90_000)
  })
})
