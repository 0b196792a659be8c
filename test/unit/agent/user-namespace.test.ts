import { describe, expect, it } from 'vitest'
import {
  ID_MAP_SIZE,
  ID_RANGES,
  namespaceOwner,
  OWNER_BASE,
  SANDBOX_IDS_BASE,
  sandboxIDMap,
} from '../../../src/agent/user-namespace.js'

describe('namespaceOwner', () => {
  it('gives each /30 sandbox network its own owner, above every ID map', () => {
    expect(namespaceOwner('10.204.0.2')).toBe(OWNER_BASE + (((10 << 24) | (204 << 16)) >>> 2))
    expect(namespaceOwner('10.204.0.6')).toBe(namespaceOwner('10.204.0.2') + 1)
    expect(namespaceOwner('10.205.0.2')).not.toBe(namespaceOwner('10.204.0.2'))
    expect(namespaceOwner('255.255.255.250')).toBeLessThan(2 ** 32 - 1)
  })

  it('refuses what is not an IPv4 address', () => {
    expect(() => namespaceOwner('fd00::2')).toThrow(RangeError)
  })
})

describe('sandboxIDMap', () => {
  it('gives each /30 of a /16 pool its own range, between 2^31 and the owners', () => {
    expect(sandboxIDMap('10.204.0.2')).toEqual({ hostID: SANDBOX_IDS_BASE, size: ID_MAP_SIZE })
    expect(sandboxIDMap('10.204.0.6').hostID).toBe(SANDBOX_IDS_BASE + ID_MAP_SIZE)
    const last = sandboxIDMap('10.204.255.254')
    expect(last.hostID + last.size).toBe(OWNER_BASE)
    expect(ID_RANGES).toBe(16_384)
  })
})
