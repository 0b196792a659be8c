import { describe, expect, it } from 'vitest'
import { createAddressPool } from '../../../../src/agent/network/address-pool.js'

describe('createAddressPool', () => {
  it('gives each slot a /30 with the host on .1 and the sandbox on .2', () => {
    const pool = createAddressPool('10.231.0.0/16')
    expect(pool.addresses(0)).toEqual({
      network: '10.231.0.0/30',
      hostAddress: '10.231.0.1',
      sandboxAddress: '10.231.0.2',
      prefixLength: 30,
    })
    expect(pool.addresses(1).sandboxAddress).toBe('10.231.0.6')
    expect(pool.addresses(64).network).toBe('10.231.1.0/30')
    expect(pool.addresses(16383).hostAddress).toBe('10.231.255.253')
  })

  it('counts its slots', () => {
    expect(createAddressPool('10.231.0.0/16').capacity).toBe(16384)
    expect(createAddressPool('192.168.7.0/24').capacity).toBe(64)
    expect(createAddressPool('10.0.0.8/30').capacity).toBe(1)
  })

  it('normalises the pool', () => {
    expect(createAddressPool('10.231.4.5/16').cidr).toBe('10.231.0.0/16')
  })

  it('refuses slots outside the pool', () => {
    const pool = createAddressPool('10.231.0.0/24')
    expect(() => pool.addresses(64)).toThrow('slot 64 is outside the address pool (capacity 64)')
    expect(() => pool.addresses(-1)).toThrow(RangeError)
    expect(() => pool.addresses(1.5)).toThrow(RangeError)
  })

  it('refuses pools that are not IPv4 CIDRs of /30 or wider', () => {
    for (const pool of ['10.231.0.0/31', 'fd00::/64', '10.231.0/16', 'pool']) {
      expect(() => createAddressPool(pool)).toThrow(`invalid address pool ${pool}`)
    }
  })
})
