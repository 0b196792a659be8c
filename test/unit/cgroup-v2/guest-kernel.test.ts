import { describe, expect, it } from 'vitest'
import { kernelPackageName, packageVersion } from '../../cgroup-v2/guest-kernel.js'

describe('kernelPackageName', () => {
  it('finds the image package the metapackage depends on', () => {
    const stdout = 'linux-image-amd64\n  Depends: linux-image-6.1.0-50-amd64\n'
    expect(kernelPackageName(stdout)).toBe('linux-image-6.1.0-50-amd64')
  })

  it('refuses output without one', () => {
    expect(() => kernelPackageName('linux-image-amd64\n')).toThrow('no kernel image')
  })
})

describe('packageVersion', () => {
  it('reads the Version field', () => {
    const stdout = 'Package: linux-image-6.1.0-50-amd64\nVersion: 6.1.176-1\nSize: 70305560\n'
    expect(packageVersion(stdout)).toBe('6.1.176-1')
  })
})
