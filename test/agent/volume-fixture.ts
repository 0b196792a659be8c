import { chmod, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { makeDiskImage, mountImage, removeDiskImage } from '../../src/agent/rootfs/disk-image.js'

/**
 * A volume as the volume store makes one: a sparse ext4 image `<parent>/<name>.img` mounted
 * loop,nodev,nosuid at `<parent>/<name>`, whose root is 0777 and owned 0:0. Returns the mount
 * point, the volume's host directory.
 */
export async function mountTestVolume(parent: string, name: string, sizeMB = 64): Promise<string> {
  const mountPoint = path.join(parent, name)
  await mkdir(mountPoint)
  await makeDiskImage(`${mountPoint}.img`, sizeMB, { journal: true })
  await mountImage(`${mountPoint}.img`, mountPoint, { fresh: true })
  await chmod(mountPoint, 0o777)
  return mountPoint
}

/** Unmounts a test volume and deletes its image; one already gone is fine. */
export async function removeTestVolume(mountPoint: string): Promise<void> {
  await removeDiskImage({ image: `${mountPoint}.img`, mountPoint })
}
