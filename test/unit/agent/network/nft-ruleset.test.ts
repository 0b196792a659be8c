import { describe, expect, it } from 'vitest'
import {
  legacyRemovalScript,
  sandboxRemovalScript,
  sandboxScript,
  tableRemovalScript,
  tableScript,
  updateScript,
} from '../../../../src/agent/network/nft-ruleset.js'

const veth = 'sbh1a2b3c4d'
const closed = ['10.0.0.0/8', '169.254.0.0/16']
const policy = { allow: ['10.232.0.0/30', '1.2.3.4/32'], deny: ['0.0.0.0/0'] }

describe('tableScript', () => {
  it('without masquerade: host closed, sandboxes apart before anything else, the uplink out of bounds', () => {
    expect(
      tableScript({
        prefix: 'sb',
        poolCIDR: '10.231.0.0/16',
        masquerade: false,
        masqueradeBuilds: false,
        uplinks: ['eth0'],
        closed,
      }),
    ).toBe(`add table inet sandbar_sb
add set inet sandbar_sb closed { type ipv4_addr; flags interval; }
add set inet sandbar_sb ready { type ifname; }
add set inet sandbar_sb allow { type ifname . ipv4_addr; flags interval; }
add set inet sandbar_sb deny { type ifname . ipv4_addr; flags interval; }
flush set inet sandbar_sb closed
add element inet sandbar_sb closed { 10.0.0.0/8, 169.254.0.0/16 }
add chain inet sandbar_sb input { type filter hook input priority filter; policy accept; }
flush chain inet sandbar_sb input
add rule inet sandbar_sb input iifname "sbh*" ct state established,related accept
add rule inet sandbar_sb input iifname "sbh*" drop
add chain inet sandbar_sb output { type filter hook output priority filter; policy accept; }
flush chain inet sandbar_sb output
add rule inet sandbar_sb output oifname "sbh*" ct state established,related accept
add rule inet sandbar_sb output oifname "sbh*" meta skuid 0 accept
add rule inet sandbar_sb output oifname "sbh*" drop
add chain inet sandbar_sb forward { type filter hook forward priority filter; policy accept; }
flush chain inet sandbar_sb forward
add rule inet sandbar_sb forward iifname "sbh*" oifname "sbh*" drop
add rule inet sandbar_sb forward iifname "sbh*" ip daddr 10.231.0.0/16 drop
add rule inet sandbar_sb forward iifname "sbh*" meta nfproto ipv6 drop
add rule inet sandbar_sb forward iifname "sbh*" oifname { "eth0" } drop
add rule inet sandbar_sb forward iifname "sbh*" ct state established,related accept
add rule inet sandbar_sb forward oifname "sbh*" ct state established,related accept
add rule inet sandbar_sb forward iifname "sbh*" iifname != @ready drop
add rule inet sandbar_sb forward iifname "sbh*" iifname . ip daddr @allow accept
add rule inet sandbar_sb forward iifname "sbh*" ip daddr @closed drop
add rule inet sandbar_sb forward iifname "sbh*" iifname . ip daddr @deny drop
add rule inet sandbar_sb forward iifname "sbh*" accept
add rule inet sandbar_sb forward oifname "sbh*" drop
add chain inet sandbar_sb postrouting { type nat hook postrouting priority srcnat; policy accept; }
flush chain inet sandbar_sb postrouting
`)
  })

  it('with masquerade: out through the uplinks only, a NAT rule for the pool on every uplink', () => {
    const script = tableScript({
      prefix: 'sb',
      poolCIDR: '10.231.0.0/16',
      masquerade: true,
      masqueradeBuilds: false,
      uplinks: ['eth0', 'wlan0'],
      closed,
    })
    expect(script).not.toContain('oifname { "eth0", "wlan0" } drop')
    expect(script).toContain(
      'add rule inet sandbar_sb forward iifname "sbh*" oifname != { "eth0", "wlan0" } drop\n',
    )
    expect(script.split('\n').slice(-2)).toEqual([
      'add rule inet sandbar_sb postrouting ip saddr 10.231.0.0/16 oifname { "eth0", "wlan0" } masquerade',
      '',
    ])
  })

  it('without an uplink: no NAT; masqueraded sandboxes have nowhere to go', () => {
    for (const masquerade of [true, false]) {
      const script = tableScript({
        prefix: 'sb',
        poolCIDR: '10.231.0.0/16',
        masquerade,
        masqueradeBuilds: masquerade,
        uplinks: [],
        closed,
      })
      expect(script).not.toMatch(/oifname !?=? ?\{|masquerade/)
      const dropAll = 'add rule inet sandbar_sb forward iifname "sbh*" drop\n'
      const beforeReady = script.slice(0, script.indexOf('@ready'))
      expect(beforeReady.includes(dropAll)).toBe(masquerade)
    }
  })

  it('with masqueradeBuilds alone: build sandboxes out through the uplinks, masqueraded; others never', () => {
    const script = tableScript({
      prefix: 'sb',
      poolCIDR: '10.231.0.0/16',
      masquerade: false,
      masqueradeBuilds: true,
      uplinks: ['eth0'],
      closed,
    })
    expect(script).toContain(
      'add rule inet sandbar_sb forward iifname "sbhx*" oifname != { "eth0" } drop\n',
    )
    expect(script).toContain(
      'add rule inet sandbar_sb forward iifname "sbh*" iifname != "sbhx*" oifname { "eth0" } drop\n',
    )
    expect(script.split('\n').slice(-2)).toEqual([
      'add rule inet sandbar_sb postrouting iifname "sbhx*" ip saddr 10.231.0.0/16 oifname { "eth0" } masquerade',
      '',
    ])
  })

  it('drops traffic between sandboxes before any established or allow rule', () => {
    const script = tableScript({
      prefix: 'sb',
      poolCIDR: '10.231.0.0/16',
      masquerade: true,
      masqueradeBuilds: false,
      uplinks: ['eth0'],
      closed,
    })
    const forward = script.split('\n').filter((line) => line.includes(' forward '))
    const first = (text: string) => forward.findIndex((line) => line.includes(text))
    expect(first('oifname "sbh*" drop')).toBeLessThan(first('ct state'))
    expect(first('ip daddr 10.231.0.0/16 drop')).toBeLessThan(first('@allow'))
  })

  it('refuses unchecked names', () => {
    const config = {
      prefix: 'sb',
      poolCIDR: '10.231.0.0/16',
      masquerade: false,
      masqueradeBuilds: false,
      closed,
    }
    expect(() => tableScript({ ...config, uplinks: ['eth0" accept'] })).toThrow(RangeError)
    expect(() => tableScript({ ...config, prefix: 'SB', uplinks: [] })).toThrow(RangeError)
    expect(() => tableScript({ ...config, poolCIDR: '10.231.0.1/16', uplinks: [] })).toThrow(
      RangeError,
    )
    expect(() => tableScript({ ...config, closed: ['10.0.0.1/8'], uplinks: [] })).toThrow(
      RangeError,
    )
  })
})

describe('sandbox scripts', () => {
  it('adds its allow and deny elements, then its veth to the ready set', () => {
    expect(sandboxScript('sb', veth, policy)).toBe(
      `add element inet sandbar_sb allow { "sbh1a2b3c4d" . 10.232.0.0/30, "sbh1a2b3c4d" . 1.2.3.4/32 }
add element inet sandbar_sb deny { "sbh1a2b3c4d" . 0.0.0.0/0 }
add element inet sandbar_sb ready { "sbh1a2b3c4d" }
`,
    )
    expect(sandboxScript('sb', veth, { allow: [], deny: [] })).toBe(
      'add element inet sandbar_sb ready { "sbh1a2b3c4d" }\n',
    )
  })

  it('updates by removing what it applied and adding the new, in one script', () => {
    expect(updateScript('sb', veth, policy, { allow: [], deny: ['8.8.8.8/32'] })).toBe(
      `add element inet sandbar_sb allow { "sbh1a2b3c4d" . 10.232.0.0/30, "sbh1a2b3c4d" . 1.2.3.4/32 }
add element inet sandbar_sb deny { "sbh1a2b3c4d" . 0.0.0.0/0 }
delete element inet sandbar_sb allow { "sbh1a2b3c4d" . 10.232.0.0/30, "sbh1a2b3c4d" . 1.2.3.4/32 }
delete element inet sandbar_sb deny { "sbh1a2b3c4d" . 0.0.0.0/0 }
add element inet sandbar_sb deny { "sbh1a2b3c4d" . 8.8.8.8/32 }
`,
    )
  })

  it('removes whatever is left of its elements, the ready one first', () => {
    expect(sandboxRemovalScript('sb', veth, { allow: [], deny: ['0.0.0.0/0'] })).toBe(
      `add element inet sandbar_sb ready { "sbh1a2b3c4d" }
delete element inet sandbar_sb ready { "sbh1a2b3c4d" }
add element inet sandbar_sb deny { "sbh1a2b3c4d" . 0.0.0.0/0 }
delete element inet sandbar_sb deny { "sbh1a2b3c4d" . 0.0.0.0/0 }
`,
    )
    expect(() => sandboxRemovalScript('sb', 'eth0', policy)).toThrow(
      'not a host veth of prefix sb: eth0',
    )
  })

  it("removes an older agent's map, and each sandbox's chain and sets, whichever exist", () => {
    expect(legacyRemovalScript('sb', { veths: [veth], map: true })).toBe(
      `delete map inet sandbar_sb sandboxes
add chain inet sandbar_sb sandbox_sbh1a2b3c4d
flush chain inet sandbar_sb sandbox_sbh1a2b3c4d
delete chain inet sandbar_sb sandbox_sbh1a2b3c4d
add set inet sandbar_sb allow_sbh1a2b3c4d { type ipv4_addr; flags interval; }
delete set inet sandbar_sb allow_sbh1a2b3c4d
add set inet sandbar_sb deny_sbh1a2b3c4d { type ipv4_addr; flags interval; }
delete set inet sandbar_sb deny_sbh1a2b3c4d
`,
    )
    expect(legacyRemovalScript('sb', { veths: [], map: false })).toBe('')
  })

  it('removes the table whether or not it exists', () => {
    expect(tableRemovalScript('sb')).toBe(
      'add table inet sandbar_sb\ndelete table inet sandbar_sb\n',
    )
  })

  it('refuses veth names and CIDRs that were not checked', () => {
    expect(() => sandboxScript('sb', 'eth0', policy)).toThrow('not a host veth of prefix sb: eth0')
    expect(() => sandboxScript('sb', 'sbx1a2b3c4d', policy)).toThrow(RangeError)
    expect(() => legacyRemovalScript('sb', { veths: ['eth0'], map: false })).toThrow(RangeError)
    const none = { allow: [], deny: [] }
    expect(() => updateScript('sb', veth, none, { allow: ['1.2.3.4'], deny: [] })).toThrow(
      'not a normalised IPv4 CIDR: 1.2.3.4',
    )
    expect(() =>
      updateScript('sb', veth, none, { allow: [], deny: ['1.2.3.4/32 } ; flush ruleset'] }),
    ).toThrow(RangeError)
  })
})
