import { describe, expect, it } from 'vitest'
import {
  covers,
  formatIPv4,
  formatIPv4CIDR,
  overlaps,
  parseIPv4,
  parseIPv4CIDR,
  withoutNetworks,
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

  it('tells whether two networks overlap', () => {
    const cidr = (text: string) => parseIPv4CIDR(text) ?? { address: -1, prefixLength: 0 }
    expect(overlaps(cidr('10.0.0.0/8'), cidr('10.9.0.0/16'))).toBe(true)
    expect(overlaps(cidr('10.9.0.0/16'), cidr('10.0.0.0/8'))).toBe(true)
    expect(overlaps(cidr('10.9.0.0/16'), cidr('10.10.0.0/16'))).toBe(false)
  })

  it('cuts networks out of a wider one, as the fewest CIDRs', () => {
    const cidr = (text: string) => parseIPv4CIDR(text) ?? { address: -1, prefixLength: 0 }
    const cut = (outer: string, holes: string[]) =>
      withoutNetworks(cidr(outer), holes.map(cidr)).map(formatIPv4CIDR)
    expect(cut('10.0.0.0/8', [])).toEqual(['10.0.0.0/8'])
    expect(cut('10.0.0.0/8', ['10.0.0.0/8'])).toEqual([])
    expect(cut('10.0.0.0/30', ['10.0.0.0/8'])).toEqual([])
    expect(cut('10.0.0.0/8', ['11.0.0.0/8'])).toEqual(['10.0.0.0/8'])
    expect(cut('10.0.0.0/29', ['10.0.0.4/31'])).toEqual(['10.0.0.0/30', '10.0.0.6/31'])
    expect(cut('192.0.0.0/8', ['192.168.0.0/16'])).toEqual([
      '192.0.0.0/9',
      '192.128.0.0/11',
      '192.160.0.0/13',
      '192.169.0.0/16',
      '192.170.0.0/15',
      '192.172.0.0/14',
      '192.176.0.0/12',
      '192.192.0.0/10',
    ])
  })
})
