import { describe, expect, it } from 'vitest'
import {
  covers,
  formatIPv4,
  formatIPv4CIDR,
  parseIPv4,
  parseIPv4CIDR,
} from '../../../../src/agent/network/ipv4.js'

describe('ipv4', () => {
  it('parses and formats dotted quads', () => {
    expect(parseIPv4('10.231.0.1')).toBe(0x0ae70001)
    expect(parseIPv4('255.255.255.255')).toBe(2 ** 32 - 1)
    expect(formatIPv4(0x0ae70001)).toBe('10.231.0.1')
    for (const text of [
      '1.2.3',
      '1.2.3.4.5',
      '1.2.3.256',
      '01.2.3.4',
      '1.2.3.-4',
      ' 1.2.3.4',
      '',
    ]) {
      expect(parseIPv4(text)).toBeUndefined()
    }
  })

  it('parses CIDRs, bare addresses as /32', () => {
    expect(parseIPv4CIDR('1.2.3.4')).toEqual({ address: parseIPv4('1.2.3.4'), prefixLength: 32 })
    expect(formatIPv4CIDR({ address: 0, prefixLength: 0 })).toBe('0.0.0.0/0')
    const cidr = parseIPv4CIDR('172.16.5.4/12')
    expect(cidr === undefined ? undefined : formatIPv4CIDR(cidr)).toBe('172.16.0.0/12')
    for (const text of ['1.2.3.4/33', '1.2.3.4/08', '1.2.3.4/', '1.2.3.4/1/2', 'a/8']) {
      expect(parseIPv4CIDR(text)).toBeUndefined()
    }
  })

  it('tells whether one network covers another', () => {
    const wide = { address: parseIPv4('10.0.0.0') ?? -1, prefixLength: 8 }
    const narrow = { address: parseIPv4('10.9.0.0') ?? -1, prefixLength: 16 }
    expect(covers(wide, narrow)).toBe(true)
    expect(covers(narrow, wide)).toBe(false)
    expect(covers(wide, wide)).toBe(true)
  })
})
