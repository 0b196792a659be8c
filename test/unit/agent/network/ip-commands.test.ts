import { describe, expect, it } from 'vitest'
import {
  batchArgs,
  defaultRouteArgs,
  hostSetupBatch,
  linkDeleteArgs,
  netnsListArgs,
  sandboxSetupBatch,
  vethMacAddress,
} from '../../../../src/agent/network/ip-commands.js'

const spec = {
  netns: 'sb-abc123',
  netnsExists: false,
  hostVeth: 'sbh12345678',
  hostAddress: '10.231.0.5',
  sandboxAddress: '10.231.0.6',
  prefixLength: 30,
}

describe('ip commands', () => {
  it('wires the host side in one batch, the peer born as eth0 inside the netns', () => {
    expect(hostSetupBatch(spec)).toBe(
      'netns add sb-abc123\n' +
        'link add sbh12345678 address 02:00:0a:e7:00:05 type veth' +
        ' peer name eth0 address 02:00:0a:e7:00:06 netns sb-abc123\n' +
        'addr add 10.231.0.5/30 dev sbh12345678\n' +
        'link set sbh12345678 up\n' +
        'neigh replace 10.231.0.6 lladdr 02:00:0a:e7:00:06 dev sbh12345678 nud permanent\n',
    )
  })

  it('wires a netns that exists already without adding one', () => {
    expect(hostSetupBatch({ ...spec, netnsExists: true })).toMatch(/^link add sbh12345678 /)
  })

  it('wires the sandbox side in one batch, knowing the host end without ARP', () => {
    expect(sandboxSetupBatch(spec)).toBe(
      'link set lo up\n' +
        'addr add 10.231.0.6/30 dev eth0\n' +
        'link set eth0 up\n' +
        'neigh replace 10.231.0.5 lladdr 02:00:0a:e7:00:05 dev eth0 nud permanent\n' +
        'route add default via 10.231.0.5\n',
    )
  })

  it('gives each veth end a locally administered unicast MAC address from its IPv4 address', () => {
    expect(vethMacAddress('10.231.0.5')).toBe('02:00:0a:e7:00:05')
    expect(vethMacAddress('192.168.255.254')).toBe('02:00:c0:a8:ff:fe')
    for (const bad of ['10.231.0', '10.231.0.256', 'fd00::1', '']) {
      expect(() => vethMacAddress(bad)).toThrow(RangeError)
    }
  })

  it('refuses tokens ip -batch would split or interpret', () => {
    for (const netns of ['a b', 'a"b', 'a#b', "a'b", 'a\nlink del eth0', '']) {
      expect(() => hostSetupBatch({ ...spec, netns })).toThrow(RangeError)
    }
  })

  it('builds argv', () => {
    expect(batchArgs()).toEqual(['-batch', '-'])
    expect(batchArgs('sb-x')).toEqual(['-n', 'sb-x', '-batch', '-'])
    expect(linkDeleteArgs('sbh1')).toEqual(['link', 'delete', 'sbh1'])
    expect(netnsListArgs()).toEqual(['-j', 'netns', 'list'])
    expect(defaultRouteArgs()).toEqual(['-j', 'route', 'show', 'default'])
  })
})
