import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { MountEntry } from '../rootfs/mountinfo.js'
import { readCgroupMounts } from '../runtime/cgroup-mode.js'

/**
 * The host keeps this many PIDs (or a tenth of `kernel.pid_max`, if more) out of the
 * sandboxes' reach, for the service, the runtimes it starts and whatever else the host runs.
 */
export const HOST_PID_RESERVE = 4096

/**
 * How many tasks all of an agent's sandboxes may hold together: the host's task ceiling
 * (`kernel.pid_max`, or `kernel.threads-max` if lower) less the reserve. Each sandbox's own
 * pids limit sits below it, so no set of teams together can exhaust the host's PIDs.
 */
export function pidsBudget(pidMax: number, threadsMax: number): number {
  const ceiling = Math.min(pidMax, threadsMax)
  return ceiling - Math.max(HOST_PID_RESERVE, Math.ceil(ceiling / 10))
}

/**
 * CPU weight of the agent's parent of all sandboxes: half the kernel's default (cpu.shares
 * 1024 on v1, cpu.weight 100 on v2). Under contention all sandboxes together get a third of
 * the CPU beside one busy cgroup of default weight, such as the service's, so sandboxes cannot
 * starve it; without contention the weight changes nothing.
 */
const PARENT_CPU = { v1: { file: 'cpu.shares', value: 512 }, v2: { file: 'cpu.weight', value: 50 } }

export interface ParentCgroupLimits {
  pidsMax: number
}

/**
 * Creates the parent cgroup of an agent's sandboxes (the runtimes then create each sandbox's
 * own below it) and writes its pids budget and CPU weight, on cgroup v1, hybrid and v2 hosts.
 */
export async function limitParentCgroup(cgroupPath: string, limits: ParentCgroupLimits) {
  const mounts = await readCgroupMounts()
  const pids = hierarchyOf(mounts, 'pids')
  await writeLimit(pids, cgroupPath, 'pids', 'pids.max', limits.pidsMax)
  const cpu = hierarchyOf(mounts, 'cpu')
  const weight = cpu.fsType === 'cgroup2' ? PARENT_CPU.v2 : PARENT_CPU.v1
  await writeLimit(cpu, cgroupPath, 'cpu', weight.file, weight.value)
}

/**
 * The file holding the CPU weight of the cgroup at `cgroupPath`: `cpu.shares` in the v1 cpu
 * hierarchy, else v2's `cpu.weight`.
 */
export async function cpuWeightFile(cgroupPath: string): Promise<string> {
  const cpu = hierarchyOf(await readCgroupMounts(), 'cpu')
  const weight = cpu.fsType === 'cgroup2' ? PARENT_CPU.v2 : PARENT_CPU.v1
  return path.join(cpu.mountPoint, cgroupPath, weight.file)
}

/** The v1 hierarchy of `controller`, or else the v2 one (hybrid hosts keep both). */
export function hierarchyOf(mounts: MountEntry[], controller: string): MountEntry {
  const v1 = mounts.find(
    (entry) => entry.fsType === 'cgroup' && entry.superOptions.split(',').includes(controller),
  )
  const hierarchy = v1 ?? mounts.find((entry) => entry.fsType === 'cgroup2')
  if (hierarchy === undefined)
    throw new Error(`no cgroup hierarchy has the ${controller} controller`)
  return hierarchy
}

async function writeLimit(
  hierarchy: MountEntry,
  cgroupPath: string,
  controller: string,
  file: string,
  value: number,
): Promise<void> {
  if (hierarchy.fsType === 'cgroup2') {
    // v2: a controller's files appear in a child only once its parent delegates it.
    await writeFile(path.join(hierarchy.mountPoint, 'cgroup.subtree_control'), `+${controller}`)
  }
  const dir = path.join(hierarchy.mountPoint, cgroupPath)
  await mkdir(dir, { recursive: true })
  await writeFile(path.join(dir, file), String(value))
}
