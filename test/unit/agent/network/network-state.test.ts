import { describe, expect, it } from 'vitest'
import {
  defaultRouteDevices,
  netnsNames,
  tableNames,
} from '../../../../src/agent/network/network-state.js'

// Shapes as printed by iproute2 6.1 and nftables 1.0.6 on the project's hosts.
const table = JSON.stringify({
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
    { chain: { family: 'inet', table: 'sandbar_sb', name: 'sandbox_sbh1a2b3c4d', handle: 3 } },
    { rule: { family: 'inet', chain: 'sandbox_sbh1a2b3c4d', expr: [{ accept: null }] } },
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
  })

  it('rejects output of an unexpected shape', () => {
    expect(() => netnsNames('{"name":"sb-a"}')).toThrow()
    expect(() => tableNames('{"nftables":[{"table":{}}]}')).toThrow()
  })
})
