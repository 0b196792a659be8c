import { readdirSync, readFileSync } from 'node:fs'
import { chmod, open, realpath, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { runHostCommand } from '../host-command.js'
import type { BlankDisks } from './blank-disks.js'
import { isMounted, mountBlockDevice, mountImageFile } from './mount-calls.js'
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

/** How a disk's filesystem is made. */
export interface MkfsOptions {
  /**
   * Keep ext4's journal. A sandbox's disk goes without one: it does not outlive a crash of its
   * host (reconcile removes it), so the journal's writes buy nothing. A volume's data must
   * survive a crash or power cut, so a volume keeps it (agent volumes/host-volumes.ts).
   */
  journal?: boolean
}

/**
 * mkfs.ext4's argv for `image` (host-facts § Disk limits: ~17 ms with the mount). `-N` bounds
 * the inodes; lazy init keeps creation cheap and the image sparse; `-m 0`: the blocks ext4
 * reserves for host root would be out of reach of the sandbox's root, whose host ID is
 * unprivileged. Pure.
 */
export function mkfsArgs(image: string, sizeMB: number, options: MkfsOptions = {}): string[] {
  if (!Number.isInteger(sizeMB) || sizeMB < 16) {
    throw new RangeError(`disk size must be a whole number of MiB, at least 16: ${sizeMB}`)
  }
  return [
    '-q',
    '-F',
    ...['-N', String(sizeMB * INODES_PER_MB)],
    ...['-m', '0'],
    ...['-E', 'lazy_itable_init=1,lazy_journal_init=1'],
    ...(options.journal === true ? [] : ['-O', '^has_journal']),
    image,
    `${sizeMB}M`,
  ]
}

/** Makes `image` (which must not exist) a sparse file holding an empty ext4 filesystem. */
export async function makeDiskImage(
  image: string,
  sizeMB: number,
  options: MkfsOptions = {},
): Promise<void> {
  const handle = await open(image, 'wx', 0o600)
  await handle.close()
  await runHostCommand('mkfs.ext4', mkfsArgs(image, sizeMB, options))
}

/**
 * Mounts `image` at `mountPoint`, `nodev,nosuid` (nothing written there becomes a device or
 * setuid program on the host side) and `noatime`. A loop device still backed by the image (its
 * filesystem mounted elsewhere, such as in a sandbox, after this mount went) is mounted again
 * rather than a second one attached: two loop devices over one file would be two filesystems
 * writing the same blocks.
 */
export async function mountImage(
  image: string,
  mountPoint: string,
  /** Made just now: no loop device can be backed by it yet. */
  { fresh = false }: { fresh?: boolean } = {},
): Promise<void> {
  const [attached] = fresh ? [] : loopDevicesOf(image)
  await (attached === undefined
    ? mountImageFile(image, mountPoint)
    : mountBlockDevice(attached, mountPoint))
}

/**
 * Makes the sandbox's disk from its size's blank and mounts it. Its root directory stays
 * root's, 0700: the agent reaches what lies there, the sandbox's IDs only what the overlay
 * exposes.
 */
export async function mountDiskImage(disk: DiskImage, blanks: BlankDisks): Promise<void> {
  await blanks.copy(disk.image, disk.sizeMB)
  await mountImage(disk.image, disk.mountPoint, { fresh: true })
  await chmod(disk.mountPoint, 0o700)
}

/**
 * Unmounts the disk, detaches any loop device still backed by its image (a crash between
 * attach and mount, or a mount made without autoclear) and deletes the image. Each step
 * tolerates what is already gone.
 */
export async function removeDiskImage(disk: Pick<DiskImage, 'image' | 'mountPoint'>) {
  // The mounted disk names its own device; only a disk found unmounted needs every loop device
  // on the host read, and a host keeps every loop device it ever had.
  const device = (await isMounted(disk.mountPoint))
    ? await mountedDevice(disk.mountPoint)
    : undefined
  await unmountAll(disk.mountPoint)
  const attached = backedBy(disk.image, device === undefined ? loopDeviceNames() : [device])
  // Autoclear detaches a moment after the unmount; one that already went is not an error.
  for (const name of attached) {
    await runHostCommand('losetup', ['--detach', `/dev/${name}`]).catch(() => undefined)
  }
  await rm(disk.image, { force: true })
}

/**
 * The block device a mount point's filesystem is on, by its sysfs name (`loop7`); undefined for
 * a filesystem on no block device.
 */
async function mountedDevice(mountPoint: string): Promise<string | undefined> {
  const { dev } = await stat(mountPoint, { bigint: true })
  // glibc's major() and minor() of a dev_t.
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & 0xfffff000n)
  const minor = (dev & 0xffn) | ((dev >> 12n) & 0xffffff00n)
  const sysfs = `/sys/dev/block/${major}:${minor}`
  const device = await realpath(sysfs).catch(() => undefined)
  return device === undefined ? undefined : path.basename(device)
}

/**
 * Loop devices backed by `image`, from sysfs (`/sys/block/loopN/loop/backing_file`, present
 * while attached), which saves a `losetup` run. Synchronous: a host keeps every loop device it
 * ever had (a thousand after a thousand sandboxes), and a sysfs read takes microseconds where
 * each asynchronous one is a thread-pool round trip.
 */
export function loopDevicesOf(image: string): string[] {
  return backedBy(image, loopDeviceNames()).map((name) => `/dev/${name}`)
}

/** Every loop device of the host, attached or not, by its sysfs name. */
function loopDeviceNames(): string[] {
  return readdirSync('/sys/block').filter((name) => name.startsWith('loop'))
}

/** Those of the loop devices `names` still backed by `image`. */
function backedBy(image: string, names: string[]): string[] {
  const target = path.resolve(image)
  // The kernel appends " (deleted)" once the file is gone, as for /proc/*/exe.
  return names.filter(
    (name) =>
      readBackingFile(name)
        .trim()
        .replace(/ \(deleted\)$/, '') === target,
  )
}

/** A loop device's backing file, or '' when it is detached. */
function readBackingFile(device: string): string {
  try {
    return readFileSync(`/sys/block/${device}/loop/backing_file`, 'utf8')
  } catch {
    return ''
  }
}
