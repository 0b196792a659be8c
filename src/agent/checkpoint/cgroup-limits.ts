import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import * as z from 'zod/mini'
import { pathExists } from '../path-exists.js'
import { readCgroupMode } from '../runtime/cgroup-mode.js'

/**
 * The files of a container's cgroups that hold what the runtime set for it, in the order a
 * new cgroup takes them (cpuset's CPUs and nodes before any task joins; a CFS period before
 * its quota). v1 and v2 names both: each hierarchy has those of its controllers.
 */
const LIMIT_FILES = [
  'cpuset.cpus',
  'cpuset.mems',
  'cpu.shares',
  'cpu.cfs_period_us',
  'cpu.cfs_quota_us',
  'cpu.weight',
  'cpu.max',
  'memory.limit_in_bytes',
  'memory.memsw.limit_in_bytes',
  'memory.max',
  'memory.swap.max',
  'pids.max',
]

export const cgroupLimitsSchema = z.array(
  z.object({
    dir: z.string(),
    files: z.array(z.tuple([z.string(), z.string()])),
    /** v1's device allow-list (devices.list): everything else stays denied. */
    devices: z.optional(z.array(z.string())),
  }),
)

/** What the runtime wrote into a container's cgroups, per hierarchy directory. */
export type CgroupLimits = z.infer<typeof cgroupLimitsSchema>

/**
 * Reads the limits of the container's cgroups, so that a restore after a host restart, which
 * took the cgroups, makes them again as the runtime had them. CRIU's unprivileged dump leaves
 * cgroups out (criu-credentials.ts). Devices on cgroup v2 are an eBPF program of the
 * runtime's, which this cannot copy.
 */
export async function readCgroupLimits(cgroupPath: string): Promise<CgroupLimits> {
  const limits: CgroupLimits = []
  for (const dir of await containerCgroupDirs(cgroupPath)) {
    const files: [string, string][] = []
    for (const file of LIMIT_FILES) {
      const value = await readFile(path.join(dir, file), 'utf8').catch(() => undefined)
      if (value !== undefined) files.push([file, value.trim()])
    }
    const devices = await readFile(path.join(dir, 'devices.list'), 'utf8').catch(() => undefined)
    limits.push({
      dir,
      files,
      ...(devices === undefined ? {} : { devices: devices.split('\n').filter(Boolean) }),
    })
  }
  return limits
}

/** The container's cgroup in every mounted hierarchy that has it. */
export async function containerCgroupDirs(cgroupPath: string): Promise<string[]> {
  const mode = await readCgroupMode()
  const dirs = mode.mountPoints.map((mountPoint) => path.join(mountPoint, cgroupPath))
  const present = await Promise.all(dirs.map((dir) => pathExists(path.join(dir, 'cgroup.procs'))))
  return dirs.filter((_, index) => present[index])
}

/**
 * Makes the cgroups `limits` names again, where they are gone, with those limits (every
 * hierarchy the container had, the freezer's too, which pause uses).
 */
export async function recreateCgroups(limits: CgroupLimits): Promise<void> {
  for (const { dir, files, devices } of limits) {
    if (await pathExists(dir)) continue
    await mkdir(dir, { recursive: true })
    // A v1 cpuset takes CPUs and nodes only within its parent's; a parent just made has none.
    for (const file of ['cpuset.cpus', 'cpuset.mems']) await inheritCpuset(path.dirname(dir), file)
    if (devices !== undefined) {
      await writeFile(path.join(dir, 'devices.deny'), 'a')
      for (const rule of devices) await writeFile(path.join(dir, 'devices.allow'), rule)
    }
    for (const [file, value] of files) await writeFile(path.join(dir, file), value)
  }
}

/** Fills an empty cpuset file of `dir` from its parent, filling the parent's first. */
async function inheritCpuset(dir: string, file: string): Promise<void> {
  const value = await readFile(path.join(dir, file), 'utf8').catch(() => undefined)
  if (value === undefined || value.trim() !== '') return
  await inheritCpuset(path.dirname(dir), file)
  await writeFile(path.join(dir, file), await readFile(path.join(path.dirname(dir), file), 'utf8'))
}
