/** Cumulative CPU jiffies from the first line of `/proc/stat`. */
export interface CpuSample {
  busy: number
  total: number
}

export function parseCpuSample(procStat: string): CpuSample {
  const line = procStat.split('\n').find((l) => l.startsWith('cpu ')) ?? 'cpu'
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] =
    line.trim().split(/\s+/).slice(1).map(Number)
  const idleAll = idle + iowait
  const busy = user + nice + system + irq + softirq + steal
  return { busy, total: busy + idleAll }
}

/** Percentage of CPU time spent busy between two samples, rounded to 2 decimals. */
export function cpuUsedPercent(before: CpuSample, after: CpuSample): number {
  const total = after.total - before.total
  if (total <= 0) return 0
  return Math.round(((after.busy - before.busy) / total) * 10_000) / 100
}

/** Memory figures in bytes, computed as gopsutil does: used = total - free - buffers - cached. */
export function parseMeminfo(meminfo: string): { total: number; used: number; cached: number } {
  const kib = (key: string): number => {
    const match = new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(meminfo)
    return match?.[1] ? Number(match[1]) * 1024 : 0
  }
  const total = kib('MemTotal')
  const cached = kib('Cached') + kib('SReclaimable')
  const used = total - kib('MemFree') - kib('Buffers') - cached
  return { total, used: Math.max(used, 0), cached }
}
