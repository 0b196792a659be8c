import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import path from 'node:path'
import type { Sandbox } from 'e2b'
import { BlankDisks } from '../src/agent/rootfs/blank-disks.js'
import { mountDiskImage, removeDiskImage } from '../src/agent/rootfs/disk-image.js'
import { ms, percentile, report, sampleMs } from './stats.js'

const DISK_MB = 512

/**
 * What a sandbox's own disk (issue 9: disk and inode limits) costs create and kill: copying
 * its size's blank, mounting, unmounting and deleting a 512 MiB sparse ext4 image, against the
 * floor it replaced, the upper and work directories made and removed on the host's own
 * filesystem.
 */
export async function benchDiskImage(): Promise<void> {
  const scratch = await mkdtemp('/tmp/sbt-bench-disk-')
  try {
    const blanks = new BlankDisks(path.join(scratch, 'blanks'))
    await blanks.open()
    let round = 0
    const image = await sampleMs(20, 2, async () => {
      const dir = path.join(scratch, `image-${round++}`)
      await mkdir(dir)
      const disk = { image: `${dir}.img`, mountPoint: dir, sizeMB: DISK_MB }
      await mountDiskImage(disk, blanks)
      await Promise.all(['upper', 'work'].map((name) => mkdir(path.join(dir, name))))
      await removeDiskImage(disk)
    })
    const dirs = await sampleMs(20, 2, async () => {
      const dir = path.join(scratch, `dirs-${round++}`)
      await Promise.all(
        ['upper', 'work'].map((name) => mkdir(path.join(dir, name), { recursive: true })),
      )
      await rm(dir, { recursive: true })
    })
    const figure = percentile(image, 50)
    const floor = percentile(dirs, 50)
    report({
      name: `sandbox disk image (${DISK_MB} MiB ext4) make + mount + remove p50`,
      figure: ms(figure),
      floor: `plain upper/work dirs ${ms(floor)}`,
      ratio: figure / floor,
      target: 'reported',
      ok: true,
    })
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

/**
 * What doing file I/O with the requesting user's credentials (issue 9: no TOCTOU, the kernel
 * checks every step) costs a small `files.read`: as `user` envd switches its credentials around
 * the open; as `root` it does not, with everything else the same.
 */
export async function benchUserFileIO(sandbox: Sandbox): Promise<void> {
  const file = '/tmp/bench-small.txt'
  await sandbox.files.write(file, 'hello', { user: 'root' })
  try {
    const asUser = await sampleMs(200, 20, () => sandbox.files.read(file, { user: 'user' }))
    const asRoot = await sampleMs(200, 20, () => sandbox.files.read(file, { user: 'root' }))
    const figure = percentile(asUser, 50)
    const floor = percentile(asRoot, 50)
    report({
      name: 'files.read (5 bytes) as user, credentials switched p50',
      figure: ms(figure),
      floor: `as root, no switch ${ms(floor)}`,
      ratio: figure / floor,
      target: 'reported',
      ok: true,
    })
  } finally {
    await sandbox.files.remove(file, { user: 'root' })
  }
}
