import { statfsSync } from 'node:fs'

/**
 * `statfs` magic numbers of the filesystems WatchDir refuses unless `allow_network_mounts`
 * (wire contract §3.4): NFS, CIFS, SMB, SMB2 and FUSE (Linux `include/uapi/linux/magic.h`).
 * inotify sees only local changes there, so a watch would silently miss remote writes.
 */
const networkFilesystemMagics = new Set([0x6969, 0xff534d42, 0x517b, 0xfe534d42, 0x65735546])

/** Whether a `statfs` filesystem type is a network (or FUSE) filesystem. */
export function isNetworkFilesystemType(type: number): boolean {
  return networkFilesystemMagics.has(type)
}

/**
 * Whether `dir` lives on a network mount. Asks the kernel for the filesystem of the path itself
 * (as E2B's envd does), so bind mounts and nested mounts need no `/proc/mounts` prefix matching.
 * Synchronous, like every path-based call of envd (see `asUser`).
 */
export function isOnNetworkMount(dir: string): boolean {
  return isNetworkFilesystemType(statfsSync(dir).type)
}
