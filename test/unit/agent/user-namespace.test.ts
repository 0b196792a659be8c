import { describe, expect, it } from 'vitest'
import { namespaceOwner, OWNER_BASE } from '../../../src/agent/user-namespace.js'

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
