import { describe, expect, it } from 'vitest'
import { mayAccess } from '../../../src/envd/permissions.js'

const user = { uid: 1000, groups: [1000, 1500] }

describe('mayAccess', () => {
  it('lets root do anything', () => {
    expect(mayAccess({ mode: 0o000, uid: 5, gid: 5 }, { uid: 0, groups: [0] }, 'write')).toBe(true)
  })

  it('uses the owner bits for the owner, even when they are stricter than others', () => {
    expect(mayAccess({ mode: 0o600, uid: 1000, gid: 0 }, user, 'read')).toBe(true)
    expect(mayAccess({ mode: 0o077, uid: 1000, gid: 0 }, user, 'read')).toBe(false)
  })

  it('uses the group bits for any of the user groups', () => {
    expect(mayAccess({ mode: 0o070, uid: 0, gid: 1500 }, user, 'write')).toBe(true)
    expect(mayAccess({ mode: 0o007, uid: 0, gid: 1500 }, user, 'write')).toBe(false)
  })

  it('falls back to the other bits', () => {
    expect(mayAccess({ mode: 0o755, uid: 0, gid: 0 }, user, 'execute')).toBe(true)
    expect(mayAccess({ mode: 0o755, uid: 0, gid: 0 }, user, 'write')).toBe(false)
  })
})
