import {
  chmod,
  chown,
  type FileHandle,
  mkdir,
  readdir,
  rename,
  rm,
  rmdir,
  stat,
  statfs,
} from 'node:fs/promises'
import path from 'node:path'
import { errnoCode } from '../../errno-code.js'
import type { Logger } from '../../logger.js'
import type { Volumes, VolumeUsage } from '../index.js'
import { makeDiskImage, mountImage, removeDiskImage } from '../rootfs/disk-image.js'
import { isMounted } from '../rootfs/mount-calls.js'
import { unmountAll } from '../rootfs/unmount.js'
import { VolumeFiles } from './volume-files.js'
import { loopDeviceNumbers, mountedElsewhere } from './volume-holders.js'

const VOLUME_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const IMAGE_NAME = /^([0-9a-f-]{36})\.img$/
const MIB = 1024 * 1024

/**
 * Volumes on this host (agent `Volumes`): each a sparse ext4 image `<dir>/<volumeID>.img`
 * loop-mounted at `<dir>/<volumeID>/`. The image's size is the volume's quota, which the
 * filesystem enforces (ENOSPC); the journal keeps what was written through a host crash.
 */
export class HostVolumes implements Volumes {
  /** The device of `dir`'s own filesystem: a volume directory on it is not mounted. */
  private hostDevice = -1

  constructor(
    private readonly dir: string,
    private readonly logger: Logger,
  ) {}

  /**
   * Prepares the directory and mounts every volume found there (a reboot unmounts them all);
   * an image a crash left half made is removed. Traversable but not listable (0711), like
   * the sandboxes' directory: a sandbox's runtime reaches a volume's directory by path to
   * bind it, as the sandbox's root.
   */
  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true })
    await chmod(this.dir, 0o711)
    this.hostDevice = (await stat(this.dir)).dev
    for (const name of await readdir(this.dir)) {
      if (name.endsWith('.img.part')) await rm(path.join(this.dir, name), { force: true })
    }
    for (const volumeID of await this.list()) {
      try {
        await this.mount(volumeID)
      } catch (error) {
        this.logger.error({ err: error, volumeID }, 'volume could not be mounted')
      }
    }
  }

  directory(volumeID: string): string {
    if (!VOLUME_ID.test(volumeID)) throw new RangeError(`not a volume ID: '${volumeID}'`)
    return path.join(this.dir, volumeID)
  }

  async list(): Promise<string[]> {
    const names = await readdir(this.dir)
    return names.flatMap((name) => {
      const volumeID = IMAGE_NAME.exec(name)?.[1]
      return volumeID !== undefined && VOLUME_ID.test(volumeID) ? [volumeID] : []
    })
  }

  async create(volumeID: string, sizeMB: number): Promise<void> {
    const mountPoint = this.directory(volumeID)
    const image = this.image(volumeID)
    // Made under a temporary name, so a crash never leaves a half-made image under the real one.
    const part = `${image}.part`
    try {
      await makeDiskImage(part, sizeMB, { journal: true })
      await rename(part, image)
      await this.mount(volumeID)
      // The volume's root is everyone's (wave2-contracts §2.3 defaults); mkfs's lost+found
      // is no entry of the volume's (e2fsck makes it again if it needs one).
      await rmdir(path.join(mountPoint, 'lost+found'))
      await chown(mountPoint, 0, 0)
      await chmod(mountPoint, 0o777)
    } catch (error) {
      await rm(part, { force: true })
      await this.remove(volumeID).catch(() => undefined)
      throw error
    }
  }

  async remove(volumeID: string): Promise<boolean> {
    const mountPoint = this.directory(volumeID)
    const image = this.image(volumeID)
    await unmountAll(mountPoint)
    if (await mountedElsewhere(await loopDeviceNumbers(image))) return false
    await removeDiskImage({ image, mountPoint })
    await rmdir(mountPoint).catch((error: unknown) => {
      if (errnoCode(error) !== 'ENOENT') throw error
    })
    return true
  }

  async usage(volumeID: string): Promise<VolumeUsage> {
    const mountPoint = this.directory(volumeID)
    this.assertMounted((await stat(mountPoint)).dev, volumeID)
    const fs = await statfs(mountPoint)
    return {
      usedMB: Math.ceil(((fs.blocks - fs.bfree) * fs.bsize) / MIB),
      availableMB: Math.floor((fs.bavail * fs.bsize) / MIB),
    }
  }

  files(volumeID: string): VolumeFiles {
    return new VolumeFiles(this.directory(volumeID), async (root: FileHandle) =>
      this.assertMounted((await root.stat()).dev, volumeID),
    )
  }

  private image(volumeID: string): string {
    return `${this.directory(volumeID)}.img`
  }

  private async mount(volumeID: string): Promise<void> {
    const mountPoint = this.directory(volumeID)
    // Private while unmounted: nothing is meant to land on the host's own filesystem there.
    await mkdir(mountPoint, { mode: 0o700 }).catch((error: unknown) => {
      if (errnoCode(error) !== 'EEXIST') throw error
    })
    if (!(await isMounted(mountPoint))) await mountImage(this.image(volumeID), mountPoint)
  }

  /** Refuses a volume directory that is not its filesystem's: writes would reach the host's. */
  private assertMounted(device: number, volumeID: string): void {
    if (device === this.hostDevice) throw new Error(`volume ${volumeID} is not mounted`)
  }
}
