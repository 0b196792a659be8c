import bindings from 'bindings'

interface MountRootAddon {
  /** statx's STATX_ATTR_MOUNT_ROOT for `path` (mount-root.c); false when it does not exist. */
  isMountRoot(path: string): boolean
}

const addon: MountRootAddon = bindings('mount_root.node')

/**
 * Whether something is mounted at `target`: one statx, where the mount table grows with every
 * sandbox on the host (mount-root.c). Synchronous, as a stat of a local path answers at once.
 */
export function isMounted(target: string): boolean {
  return addon.isMountRoot(target)
}
