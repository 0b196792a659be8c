import { readFile } from 'node:fs/promises'
import { type MountEntry, parseMountinfo } from '../rootfs/mountinfo.js'

/**
 * How the host mounts cgroups. `hybrid` is v1 controllers plus a cgroup2 mount beside them
 * (host-facts § the machine: `/sys/fs/cgroup/unified`), which crun 1.8 refuses.
 */
export type CgroupMode =
  | { kind: 'v2'; mountPoints: string[] }
  | { kind: 'v1'; mountPoints: string[] }
  | { kind: 'hybrid'; mountPoints: string[]; unifiedMountPoint: string }

/** The cgroup file systems among a /proc/self/mountinfo text's mounts. */
export function cgroupMounts(mountinfo: string): MountEntry[] {
  return parseMountinfo(mountinfo).filter(
    (mount) => mount.fsType === 'cgroup' || mount.fsType === 'cgroup2',
  )
}

/** Classifies a /proc/self/mountinfo text. */
export function parseCgroupMode(mountinfo: string): CgroupMode {
  return cgroupModeOf(cgroupMounts(mountinfo))
}

function cgroupModeOf(mounts: MountEntry[]): CgroupMode {
  const mountPoints = mounts.map((mount) => mount.mountPoint)
  const unified = mounts.find((mount) => mount.fsType === 'cgroup2')
  const hasV1 = mounts.some((mount) => mount.fsType === 'cgroup')
  if (unified !== undefined && hasV1) {
    return { kind: 'hybrid', mountPoints, unifiedMountPoint: unified.mountPoint }
  }
  if (unified !== undefined) return { kind: 'v2', mountPoints }
  if (hasV1) return { kind: 'v1', mountPoints }
  throw new Error('no cgroup file system is mounted')
}

let hostCgroupMounts: Promise<MountEntry[]> | undefined

/**
 * The host's cgroup mounts, read once: nothing remounts them while the agent runs, and the
 * mount table they are read from grows with every sandbox, while a create and a kill each ask
 * several times.
 */
export function readCgroupMounts(): Promise<MountEntry[]> {
  hostCgroupMounts ??= readFile('/proc/self/mountinfo', 'utf8').then(cgroupMounts)
  return hostCgroupMounts
}

/** How the host mounts cgroups (readCgroupMounts). */
export async function readCgroupMode(): Promise<CgroupMode> {
  return cgroupModeOf(await readCgroupMounts())
}
