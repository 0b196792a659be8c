import { describe, expect, test } from 'vitest'
import {
  isNetworkFilesystemType,
  isOnNetworkMount,
} from '../../../../src/envd/fs/network-mounts.js'

describe('isNetworkFilesystemType', () => {
  test.each([
    ['NFS', 0x6969],
    ['CIFS', 0xff534d42],
    ['SMB', 0x517b],
    ['SMB2', 0xfe534d42],
    ['FUSE', 0x65735546],
  ])('refuses %s', (_name, magic) => {
    expect(isNetworkFilesystemType(magic)).toBe(true)
  })

  test.each([
    ['ext4', 0xef53],
    ['tmpfs', 0x01021994],
    ['overlayfs', 0x794c7630],
    ['xfs', 0x58465342],
  ])('accepts %s', (_name, magic) => {
    expect(isNetworkFilesystemType(magic)).toBe(false)
  })

  test('a local directory is not on a network mount', () => {
    expect(isOnNetworkMount('/tmp')).toBe(false)
  })
})
