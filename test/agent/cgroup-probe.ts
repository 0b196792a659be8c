import { existsSync, readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { readCgroupMode } from '../../src/agent/runtime/cgroup-mode.js'

/** The container's cgroup directories still present under any mounted hierarchy. */
export async function leftoverCgroupDirs(cgroupPath: string): Promise<string[]> {
  const mode = await readCgroupMode()
  return mode.mountPoints
    .map((mountPoint) => join(mountPoint, cgroupPath))
    .filter((path) => existsSync(path))
}

/** The limits the runtime wrote for the container. */
export async function readLimits(cgroupPath: string) {
  const mode = await readCgroupMode()
  const read = async (file: string) => (await readFile(file, 'utf8')).trim()
  if (mode.kind === 'v2') {
    const dir = join('/sys/fs/cgroup', cgroupPath)
    const [quota, period] = (await read(join(dir, 'cpu.max'))).split(' ')
    return {
      cpuQuota: Number(quota),
      cpuPeriod: Number(period),
      memory: Number(await read(join(dir, 'memory.max'))),
      pids: pidsMax(await read(join(dir, 'pids.max'))),
    }
  }
  const v1 = (controller: string, file: string) =>
    read(join('/sys/fs/cgroup', controller, cgroupPath, file))
  return {
    cpuQuota: Number(await v1('cpu', 'cpu.cfs_quota_us')),
    cpuPeriod: Number(await v1('cpu', 'cpu.cfs_period_us')),
    memory: Number(await v1('memory', 'memory.limit_in_bytes')),
    pids: pidsMax(await v1('pids', 'pids.max')),
  }
}

/** pids.max as a number: "max" (no limit) is Infinity. */
function pidsMax(text: string): number {
  return text === 'max' ? Number.POSITIVE_INFINITY : Number(text)
}

/** How many processes the kernel OOM-killed in the container's memory cgroup. */
export async function readOomKills(cgroupPath: string): Promise<number> {
  const mode = await readCgroupMode()
  const file =
    mode.kind === 'v2'
      ? join('/sys/fs/cgroup', cgroupPath, 'memory.events')
      : join('/sys/fs/cgroup/memory', cgroupPath, 'memory.oom_control')
  return Number(/^oom_kill (\d+)$/m.exec(await readFile(file, 'utf8'))?.[1] ?? 0)
}

/** pids.current, and pids.events' `max`: how many forks the limit refused. */
export async function readPids(cgroupPath: string) {
  const mode = await readCgroupMode()
  const dir = join('/sys/fs/cgroup', mode.kind === 'v2' ? '' : 'pids', cgroupPath)
  const events = await readFile(join(dir, 'pids.events'), 'utf8')
  return {
    current: Number(await readFile(join(dir, 'pids.current'), 'utf8')),
    refusedForks: Number(/^max (\d+)$/m.exec(events)?.[1] ?? 0),
  }
}

/**
 * Whether a process still runs. A killed container init is reparented to the host's PID 1 and
 * stays a zombie until that reaps it, which here (a VM whose PID 1 reaps lazily) takes a while.
 */
export function isLive(pid: number): boolean {
  try {
    return !/^State:\tZ/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
  } catch {
    return false
  }
}

/** The pids budget and CPU weight of an agent's parent cgroup of all its sandboxes. */
export async function readParentLimits(parentPath: string) {
  const mode = await readCgroupMode()
  const read = async (...parts: string[]) => (await readFile(join(...parts), 'utf8')).trim()
  if (mode.kind === 'v2') {
    const dir = join('/sys/fs/cgroup', parentPath)
    return { pids: pidsMax(await read(dir, 'pids.max')), cpuWeight: await read(dir, 'cpu.weight') }
  }
  return {
    pids: pidsMax(await read('/sys/fs/cgroup/pids', parentPath, 'pids.max')),
    cpuWeight: await read('/sys/fs/cgroup/cpu', parentPath, 'cpu.shares'),
  }
}
