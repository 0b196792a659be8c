import { chmod, open, readdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { runHostCommand } from '../host-command.js'
import { unmountAll } from './unmount.js'

/**
 * Inodes per MiB of disk: ext4's default ratio (one inode per 16 KiB), so a 512 MiB sandbox
 * gets 32,768 files, E2B's figure for the same disk.
 */
export const INODES_PER_MB = 64

/** One sandbox's disk: a sparse ext4 image file, loop-mounted where its writes go. */
export interface DiskImage {
  /** The image file on the host's filesystem (sparse: the host pays for what is written). */
  image: string
  /** Where the image's filesystem is mounted. */
  mountPoint: string
  sizeMB: number
}

/**
 * mkfs.ext4's argv for `image` (host-facts § Disk limits: ~17 ms with the mount). `-N` bounds
 * the inodes; no journal and lazy init keep creation cheap (a sandbox's disk does not outlive
 * a crash of its host: reconcile removes it); `-m 0`: the blocks ext4 reserves for host root
 * would be out of reach of the sandbox's root, whose host ID is unprivileged. Pure.
 */
export function mkfsArgs(image: string, sizeMB: number): string[] {
  if (!Number.isInteger(sizeMB) || sizeMB < 16) {
    throw new RangeError(`disk size must be a whole number of MiB, at least 16: ${sizeMB}`)
  }
  return [
    '-q',
    '-F',
    ...['-N', String(sizeMB * INODES_PER_MB)],
    ...['-m', '0'],
    ...['-E', 'lazy_itable_init=1,lazy_journal_init=1'],
    ...['-O', '^has_journal'],
    image,
    `${sizeMB}M`,
  ]
}

/**
 * Makes and mounts the sandbox's disk. The mount is `nodev,nosuid` (nothing from the sandbox
 * becomes a device or setuid program on the host side) and its root directory stays root's,
 * 0700: the agent reaches what lies there, the sandbox's IDs only what the overlay exposes.
 */
export async function mountDiskImage(disk: DiskImage): Promise<void> {
  const handle = await open(disk.image, 'wx', 0o600)
  await handle.close()
  await runHostCommand('mkfs.ext4', mkfsArgs(disk.image, disk.sizeMB))
  // `-o loop` sets up the loop device with autoclear: unmounting detaches it.
  await runHostCommand('mount', [
    ...['-t', 'ext4', '-o', 'loop,nodev,nosuid,noatime'],
    disk.image,
    disk.mountPoint,
  ])
  await chmod(disk.mountPoint, 0o700)
}

/**
 * Unmounts the disk, detaches any loop device still backed by its image (a crash between
 * attach and mount, or a mount made without autoclear) and deletes the image. Each step
 * tolerates what is already gone.
 */
export async function removeDiskImage(disk: Pick<DiskImage, 'image' | 'mountPoint'>) {
  await unmountAll(disk.mountPoint)
  // Autoclear detaches a moment after the unmount; one that already went is not an error.
  for (const device of await loopDevicesOf(disk.image)) {
    await runHostCommand('losetup', ['--detach', device]).catch(() => undefined)
  }
  await rm(disk.image, { force: true })
}

/**
 * Loop devices backed by `image`, from sysfs (`/sys/block/loopN/loop/backing_file`, present
 * while attached), which saves a `losetup` run on every kill.
 */
export async function loopDevicesOf(image: string): Promise<string[]> {
  const target = path.resolve(image)
  const devices: string[] = []
  for (const name of await readdir('/sys/block')) {
    if (!name.startsWith('loop')) continue
    const backing = await readFile(`/sys/block/${name}/loop/backing_file`, 'utf8').catch(() => '')
    // The kernel appends " (deleted)" once the file is gone, as for /proc/*/exe.
    const file = backing.trim().replace(/ \(deleted\)$/, '')
    if (file === target) devices.push(`/dev/${name}`)
  }
  return devices
}
