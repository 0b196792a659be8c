import bindings from 'bindings'

interface MountCallsAddon {
  /** statx's STATX_ATTR_MOUNT_ROOT for `path` (mount-calls.c); false when it does not exist. */
  isMountRoot(path: string): Promise<boolean>
  /** umount2 of the mount on top at `path`; rejects with the errno's `code`. */
  unmount(path: string): Promise<void>
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
