import { describe, expect, it } from 'vitest'
import { parseMountinfo } from '../../../../src/agent/rootfs/mountinfo.js'

const text = `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
98 22 0:50 / /var/lib/sandbar/sandboxes/x/rootfs rw,relatime shared:60 - overlay overlay rw,lowerdir=/l/b:/l/a,upperdir=/u,workdir=/w
99 22 0:51 / /tmp/with\\040space rw - tmpfs tmpfs rw
`

describe('parseMountinfo', () => {
  it('reads device, mount point, mount options, type, source and super options', () => {
    const entries = parseMountinfo(text)
    expect(entries[1]).toEqual({
      device: '0:50',
      mountPoint: '/var/lib/sandbar/sandboxes/x/rootfs',
      mountOptions: 'rw,relatime',
      fsType: 'overlay',
      source: 'overlay',
      superOptions: 'rw,lowerdir=/l/b:/l/a,upperdir=/u,workdir=/w',
    })
  })

  it('decodes octal escapes in paths', () => {
    expect(parseMountinfo(text)[2]?.mountPoint).toBe('/tmp/with space')
  })

  it('skips blank lines', () => {
    expect(parseMountinfo(text)).toHaveLength(3)
  })
})
