import { describe, expect, it } from 'vitest'
import {
  findUnreachableEntry,
  openedNetworks,
  SPECIAL_PURPOSE_NETWORKS,
  type UnreachableNetwork,
} from '../../../../src/agent/network/closed-networks.js'

const closed = ['10.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.168.0.0/16']

describe('openedNetworks', () => {
  it('keeps public entries and entries that name a closed network', () => {
    expect(openedNetworks(['1.2.3.4/32', '8.8.0.0/16'], closed)).toEqual([
      '1.2.3.4/32',
      '8.8.0.0/16',
    ])
    expect(openedNetworks(['10.0.0.0/8', '169.254.169.254/32'], closed)).toEqual([
      '10.0.0.0/8',
      '169.254.169.254/32',
    ])
  })

  it('opens only the public part of a wider entry: ALL_TRAFFIC never opens metadata', () => {
    const opened = openedNetworks(['0.0.0.0/0'], closed)
    expect(opened).toContain('11.0.0.0/8')
    expect(opened).toContain('128.0.0.0/3')
    const prefixes = ['10.', '169.254.', '172.16.', '192.168.']
    expect(opened.filter((cidr) => prefixes.some((prefix) => cidr.startsWith(prefix)))).toEqual([])
  })

  it('merges a named closed network with the rest of a wider entry into one valid set', () => {
    const opened = openedNetworks(['0.0.0.0/0', '10.1.0.0/16', '8.8.8.8/32'], closed)
    expect(opened).toContain('10.1.0.0/16')
    expect(opened).not.toContain('8.8.8.8/32')
  })

  it('closes the metadata address and the private ranges by default', () => {
    for (const cidr of [
      '10.0.0.0/8',
      '100.64.0.0/10',
      '169.254.0.0/16',
      '172.16.0.0/12',
      '192.168.0.0/16',
    ]) {
      expect(SPECIAL_PURPOSE_NETWORKS).toContain(cidr)
    }
  })
})

describe('findUnreachableEntry', () => {
  const networks: UnreachableNetwork[] = [
    { cidr: '10.231.0.0/16', kind: 'address pool' },
    { cidr: '192.0.2.2/32', kind: 'host address' },
  ]

  it('finds the first entry inside or around the pool or a host address', () => {
    expect(findUnreachableEntry(['1.1.1.1', '10.231.0.6'], networks)).toEqual({
      entry: '10.231.0.6',
      network: networks[0],
    })
    expect(findUnreachableEntry(['10.0.0.0/8'], networks)?.network).toEqual(networks[0])
    expect(findUnreachableEntry(['192.0.2.0/24'], networks)?.network).toEqual(networks[1])
  })

  it('passes ALL_TRAFFIC, other networks and what is not IPv4', () => {
    expect(
      findUnreachableEntry(['0.0.0.0/0', '10.232.0.0/16', 'example.com'], networks),
    ).toBeUndefined()
  })
})
