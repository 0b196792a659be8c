import { describe, expect, it } from 'vitest'
import {
  defaultRouteDevices,
  netnsNames,
  tableNames,
  tableSandboxes,
} from '../../../../src/agent/network/network-state.js'

// Shapes as printed by iproute2 6.1 and nftables 1.0.6 on the project's hosts.

/** An agent's table of the layout before the per-veth sets: a chain per sandbox. */
const legacyTable = JSON.stringify({
  nftables: [
    { metainfo: { version: '1.0.6', json_schema_version: 1 } },
    { table: { family: 'inet', name: 'sandbar_sb', handle: 1 } },
    {
      map: {
        family: 'inet',
        name: 'sandboxes',
        table: 'sandbar_sb',
        type: 'ifname',
        map: 'verdict',
        elem: [['sbh1a2b3c4d', { jump: { target: 'sandbox_sbh1a2b3c4d' } }]],
      },
    },
    {
      set: {
        family: 'inet',
        name: 'allow_sbh1a2b3c4d',
        type: 'ipv4_addr',
        flags: ['interval'],
        elem: [{ prefix: { addr: '0.0.0.0', len: 0 } }],
      },
    },
    {
      set: {
        family: 'inet',
        name: 'deny_sbh1a2b3c4d',
        type: 'ipv4_addr',
        flags: ['interval'],
        elem: ['192.0.2.1', { prefix: { addr: '198.51.100.0', len: 24 } }],
      },
    },
    { chain: { family: 'inet', table: 'sandbar_sb', name: 'sandbox_sbh1a2b3c4d', handle: 3 } },
    { rule: { family: 'inet', chain: 'sandbox_sbh1a2b3c4d', expr: [{ accept: null }] } },
  ],
})

const table = JSON.stringify({
  nftables: [
    { metainfo: { version: '1.0.6', json_schema_version: 1 } },
    { table: { family: 'inet', name: 'sandbar_sb', handle: 1 } },
    { set: { family: 'inet', name: 'closed', elem: [{ prefix: { addr: '10.0.0.0', len: 8 } }] } },
    {
      set: { family: 'inet', name: 'ready', type: 'ifname', elem: ['sbh1a2b3c4d', 'sbh00000000'] },
    },
    {
      set: {
        family: 'inet',
        name: 'allow',
        type: ['ifname', 'ipv4_addr'],
        flags: ['interval'],
        elem: [
          { concat: ['sbh1a2b3c4d', '192.0.2.1'] },
          { concat: ['sbh1a2b3c4d', { prefix: { addr: '198.51.100.0', len: 24 } }] },
        ],
      },
    },
    {
      set: {
        family: 'inet',
        name: 'deny',
        type: ['ifname', 'ipv4_addr'],
        flags: ['interval'],
        elem: [
          { concat: ['sbh1a2b3c4d', { prefix: { addr: '0.0.0.0', len: 0 } }] },
          // Out of the ready set, as by hand: its elements still go with its teardown.
          { concat: ['sbhffffffff', '192.0.2.9'] },
        ],
      },
    },
    { chain: { family: 'inet', table: 'sandbar_sb', name: 'forward', handle: 3 } },
  ],
})

describe('network state readers', () => {
  it('reads netns names, including the empty output of a host without any', () => {
    expect(netnsNames('[{"name":"sb-b","id":1},{"name":"sb-a"}]\n')).toEqual(['sb-b', 'sb-a'])
    expect(netnsNames('')).toEqual([])
  })

  it('reads default-route devices once each', () => {
    const routes =
      '[{"dst":"default","gateway":"192.0.2.1","dev":"eth0","flags":[]},' +
      '{"dst":"default","gateway":"192.0.2.9","dev":"eth0","metric":200,"flags":[]},' +
      '{"dst":"default","nexthops":[]}]'
    expect(defaultRouteDevices(routes)).toEqual(['eth0'])
    expect(defaultRouteDevices('[]')).toEqual([])
  })

  it('reads table names', () => {
    expect(tableNames(table)).toEqual(['sandbar_sb'])
    expect(tableNames(legacyTable)).toEqual(['sandbar_sb'])
  })

  it("reads each sandbox's allow and deny networks", () => {
    expect(tableSandboxes(table)).toEqual({
      policies: new Map([
        ['sbh1a2b3c4d', { allow: ['192.0.2.1/32', '198.51.100.0/24'], deny: ['0.0.0.0/0'] }],
        ['sbh00000000', { allow: [], deny: [] }],
        ['sbhffffffff', { allow: [], deny: ['192.0.2.9/32'] }],
      ]),
      legacy: { veths: [], map: false },
    })
  })

  it("reads an older agent's sandboxes from their own sets, to move them", () => {
    expect(tableSandboxes(legacyTable)).toEqual({
      policies: new Map([
        ['sbh1a2b3c4d', { allow: ['0.0.0.0/0'], deny: ['192.0.2.1/32', '198.51.100.0/24'] }],
      ]),
      legacy: { veths: ['sbh1a2b3c4d'], map: true },
    })
  })

  it('rejects output of an unexpected shape', () => {
    expect(() => netnsNames('{"name":"sb-a"}')).toThrow()
    expect(() => tableNames('{"nftables":[{"table":{}}]}')).toThrow()
    expect(() =>
      tableSandboxes('{"nftables":[{"set":{"name":"allow","elem":[{"concat":[1]}]}}]}'),
    ).toThrow()
  })
})
