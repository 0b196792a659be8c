import bindings from 'bindings'

interface MountCallsAddon {
  /** statx's STATX_ATTR_MOUNT_ROOT for `path` (mount-calls.c); false when it does not exist. */
  isMountRoot(path: string): Promise<boolean>
  /** umount2 of the mount on top at `path`; rejects with the errno's `code`. */
  unmount(path: string): Promise<void>
  /** mount(2) of ext4 from `source`, nodev,nosuid,noatime; `attach`: a loop device first. */
  mountExt4(source: string, path: string, attach: boolean): Promise<void>
  /** mount(2) of a read-only sysfs for the netns pinned at `netnsPath`, from a thread in it. */
  mountNetnsSysfs(netnsPath: string, path: string): Promise<void>
  /** FS_IOC_SETFLAGS with FS_APPEND_FL set or cleared; throws with the errno's `code`. */
  setAppendOnly(path: string, on: boolean): void
}

const addon: MountCallsAddon = bindings('mount_calls.node')

/**
 * Whether something is mounted at `target`: one statx, where the mount table grows with every
 * sandbox on the host (mount-calls.c).
 */
export function isMounted(target: string): Promise<boolean> {
  return addon.isMountRoot(target)
}

/**
 * Unmounts the mount on top at `target` with one system call, not a umount(8) that reads the
 * whole mount table. Rejects with `code` EBUSY while a process uses it, EINVAL where nothing is
 * mounted.
 */
export function unmount(target: string): Promise<void> {
  return addon.unmount(target)
}

/**
 * Mounts the ext4 filesystem of the image file `image` at `target`, nodev, nosuid and noatime,
 * through a free loop device that detaches itself once the filesystem is unmounted (autoclear).
 * What mount(8)'s `-o loop` does, without its stat of every loop device on the host for one
 * already backed by the image: the caller knows (disk-image.ts loopDevicesOf).
 */
export function mountImageFile(image: string, target: string): Promise<void> {
  return addon.mountExt4(image, target, true)
}

/** Mounts the ext4 filesystem of the attached block device `device` at `target`, as above. */
export function mountBlockDevice(device: string, target: string): Promise<void> {
  return addon.mountExt4(device, target, false)
}

/**
 * Mounts, read-only, a sysfs showing the network devices of the netns pinned at `netnsPath` on
 * `target`, in the agent's own mount namespace: sysfs shows the netns of the task that mounts
 * it, so a thread of its own enters the netns for the mount and ends, as `nsenter --net mount`
 * did with two programs.
 */
export function mountSysfsOfNetns(netnsPath: string, target: string): Promise<void> {
  return addon.mountNetnsSysfs(netnsPath, target)
}

/**
 * Sets or clears the append-only attribute of the file at `file` (what `chattr +a` and `-a`
 * do), synchronously: one ioctl on a local inode, where starting chattr held the event loop.
 */
export function setAppendOnly(file: string, on: boolean): void {
  addon.setAppendOnly(file, on)
}
