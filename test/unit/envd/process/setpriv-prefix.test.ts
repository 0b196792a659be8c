import { describe, expect, it } from 'vitest'
import { HOST_SETPRIV, setprivPrefix } from '../../../../src/envd/process/setpriv-prefix.js'

describe('setprivPrefix', () => {
  it('is the host setpriv when no toolbox is configured', () => {
    expect(setprivPrefix(undefined)).toEqual([HOST_SETPRIV])
    expect(setprivPrefix('')).toEqual(['/usr/bin/setpriv'])
  })

  it('starts the toolbox setpriv through the toolbox loader and libraries', () => {
    expect(setprivPrefix('/.sandbar')).toEqual([
      '/.sandbar/lib/ld-linux-x86-64.so.2',
      '--library-path',
      '/.sandbar/lib',
      '/.sandbar/bin/setpriv',
    ])
    expect(setprivPrefix('/opt/tb/')[2]).toBe('/opt/tb/lib')
  })

  it('rejects a relative toolbox, which would resolve against each process’s cwd', () => {
    expect(() => setprivPrefix('sandbar')).toThrow(
      "SANDBAR_TOOLBOX must be an absolute path, got 'sandbar'",
    )
  })
})
