import { describe, expect, it } from 'vitest'
import { parseResolvers } from '../../../../src/agent/network/host-resolvers.js'

describe('parseResolvers', () => {
  it('takes the IPv4 name servers, not loopback stubs, IPv6 or other lines', () => {
    const text = [
      '# generated',
      'search example.internal',
      'nameserver 10.255.255.53',
      'nameserver 127.0.0.53',
      'nameserver fd00::53',
      '  nameserver   192.0.2.1  ',
      'options edns0',
    ].join('\n')
    expect(parseResolvers(text)).toEqual(['10.255.255.53', '192.0.2.1'])
  })
})
