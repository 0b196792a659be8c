import { describe, expect, it } from 'vitest'
import { bootModuleDeps } from '../../cgroup-v2/guest-initramfs.js'

const modulesDep = [
  'kernel/fs/9p/9p.ko: kernel/fs/netfs/netfs.ko kernel/net/9p/9pnet.ko',
  'kernel/fs/netfs/netfs.ko:',
  'kernel/net/9p/9pnet.ko:',
  'kernel/net/9p/9pnet_virtio.ko: kernel/drivers/virtio/virtio_ring.ko kernel/net/9p/9pnet.ko',
  'kernel/drivers/virtio/virtio_ring.ko:',
  'kernel/drivers/net/veth.ko:',
  '',
].join('\n')

describe('bootModuleDeps', () => {
  it('keeps the named modules and their dependencies, each once', () => {
    expect(bootModuleDeps(modulesDep, ['9p', '9pnet_virtio'])).toEqual([
      'kernel/fs/9p/9p.ko: kernel/fs/netfs/netfs.ko kernel/net/9p/9pnet.ko',
      'kernel/fs/netfs/netfs.ko:',
      'kernel/net/9p/9pnet.ko:',
      'kernel/net/9p/9pnet_virtio.ko: kernel/drivers/virtio/virtio_ring.ko kernel/net/9p/9pnet.ko',
      'kernel/drivers/virtio/virtio_ring.ko:',
    ])
  })

  it('refuses a module the kernel does not have', () => {
    expect(() => bootModuleDeps(modulesDep, ['virtiofs'])).toThrow('no module virtiofs')
  })
})
