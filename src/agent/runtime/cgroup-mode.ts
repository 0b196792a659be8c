import { readFile } from 'node:fs/promises'

/**
 * How the host mounts cgroups. `hybrid` is v1 controllers plus a cgroup2 mount beside them
 * (host-facts § the machine: `/sys/fs/cgroup/unified`), which crun 1.8 refuses.
 */
export type CgroupMode =
  | { kind: 'v2'; mountPoints: string[] }
  | { kind: 'v1'; mountPoints: string[] }
  | { kind: 'hybrid'; mountPoints: string[]; unifiedMountPoint: string }

interface CgroupMount {
  mountPoint: string
  fsType: 'cgroup' | 'cgroup2'
}

/** Mount points of cgroup file systems in a /proc/self/mountinfo text. */
export function cgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = []
  for (const line of mountinfo.split('\n')) {
    // proc(5): optional fields end at " - ", then the file system type.
    const [left, right] = line.split(' - ')
    if (left === undefined || right === undefined) continue
    const mountPoint = left.split(' ')[4]
    const fsType = right.split(' ')[0]
    if (mountPoint === undefined) continue
    if (fsType === 'cgroup' || fsType === 'cgroup2') {
      mounts.push({ mountPoint: unescapeMountPath(mountPoint), fsType })
    }
  }
  return mounts
}

/** Classifies a /proc/self/mountinfo text. */
export function parseCgroupMode(mountinfo: string): CgroupMode {
  const mounts = cgroupMounts(mountinfo)
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

let hostCgroupMode: Promise<CgroupMode> | undefined

/**
 * The host's cgroup mounts, read once: nothing remounts them while the agent runs, and the
 * mount table they are read from grows with every sandbox, while a create and a kill each ask
 * several times.
 */
export function readCgroupMode(): Promise<CgroupMode> {
  hostCgroupMode ??= readFile('/proc/self/mountinfo', 'utf8').then(parseCgroupMode)
  return hostCgroupMode
}

/** mountinfo escapes space, tab, newline and backslash as octal (`\040`). */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) =>
    String.fromCharCode(Number.parseInt(octal, 8)),
  )
}
