import { statfsSync } from 'node:fs'
import path from 'node:path'
import { hierarchyOf } from './limits/parent-cgroup.js'
import { readFileIfExistsSync } from './path-exists.js'
import type { MountEntry } from './rootfs/mountinfo.js'

/** What a running sandbox uses of the host now (Agent.usage). */
export interface SandboxUsage {
  /** CPU time its processes have taken since `startedAt`, in microseconds. */
  cpuTimeUs: number
  /** When its processes started: for a warm pool's sandbox, before a client claimed it. */
  startedAt: Date
  cpuCount: number
  /** Memory its processes hold, less the page cache, in bytes. */
  memUsed: number
  /** Its memory limit, in bytes. */
  memTotal: number
  /** Page cache charged to it, in bytes. */
  memCache: number
  diskUsed: number
  diskTotal: number
}

const MiB = 1024 * 1024

/** Where a sandbox's figures are on the host. */
export interface SandboxUsageSource {
  cgroupPath: string
  startedAt: Date
  /** The mount of its disk image. */
  disk: string
  cpuCount: number
  memoryMB: number
}

/**
 * Reads a sandbox's use from its cgroups and its disk, on cgroup v1, hybrid and v2 hosts.
 * Synchronous: kernel files and statfs answer at once, and the telemetry pass reads every
 * sandbox. Undefined when its cgroups are not on the host (gVisor keeps its own).
 */
export function readSandboxUsage(
  mounts: MountEntry[],
  source: SandboxUsageSource,
): SandboxUsage | undefined {
  const memory = hierarchyOf(mounts, 'memory')
  const cpu = hierarchyOf(mounts, 'cpuacct')
  const memoryDir = path.join(memory.mountPoint, source.cgroupPath)
  const cpuDir = path.join(cpu.mountPoint, source.cgroupPath)
  const v2 = memory.fsType === 'cgroup2'
  const current = readFileIfExistsSync(
    path.join(memoryDir, v2 ? 'memory.current' : 'memory.usage_in_bytes'),
  )
  const memoryStat = readFileIfExistsSync(path.join(memoryDir, 'memory.stat'))
  const cpuTime =
    cpu.fsType === 'cgroup2'
      ? statField(readFileIfExistsSync(path.join(cpuDir, 'cpu.stat')), 'usage_usec')
      : nanosToMicros(readFileIfExistsSync(path.join(cpuDir, 'cpuacct.usage')))
  if (current === undefined || memoryStat === undefined || cpuTime === undefined) return undefined
  const cache = statField(memoryStat, v2 ? 'file' : 'total_cache') ?? 0
  const disk = statfsSync(source.disk)
  return {
    cpuTimeUs: cpuTime,
    startedAt: source.startedAt,
    cpuCount: source.cpuCount,
    memUsed: Math.max(Number(current) - cache, 0),
    memTotal: source.memoryMB * MiB,
    memCache: cache,
    diskUsed: (disk.blocks - disk.bfree) * disk.bsize,
    diskTotal: disk.blocks * disk.bsize,
  }
}

/** CPU use in percent of the sandbox's CPUs between two readings, rounded to 2 decimals. */
export function cpuUsedPercent(
  before: { cpuTimeUs: number; at: number },
  after: { cpuTimeUs: number; at: number },
  cpuCount: number,
): number {
  const wallUs = (after.at - before.at) * 1000
  if (wallUs <= 0 || cpuCount <= 0) return 0
  const percent = ((after.cpuTimeUs - before.cpuTimeUs) / (wallUs * cpuCount)) * 100
  return Math.round(Math.min(Math.max(percent, 0), 100) * 100) / 100
}

/** The number of a `key value` line of a cgroup stat file. */
function statField(text: string | undefined, key: string): number | undefined {
  const match = text === undefined ? null : new RegExp(`^${key} (\\d+)$`, 'm').exec(text)
  return match?.[1] === undefined ? undefined : Number(match[1])
}

function nanosToMicros(text: string | undefined): number | undefined {
  return text === undefined ? undefined : Math.floor(Number(text.trim()) / 1000)
}
