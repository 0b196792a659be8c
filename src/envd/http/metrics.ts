import { readFile, statfs } from 'node:fs/promises'
import os from 'node:os'
import type { HttpExchange } from './http-exchange.js'
import { type CpuSample, cpuUsedPercent, parseCpuSample, parseMeminfo } from './proc-stats.js'

const MiB = 1024 * 1024

/**
 * `GET /metrics`: one snake_case record (wire contract §3.3). CPU use is measured since the
 * previous call (the first call measures since envd started), as gopsutil's Percent(0) does.
 */
export function metricsRoute(): (exchange: HttpExchange) => Promise<void> {
  let previousCpu: Promise<CpuSample> = readCpuSample()
  return async (exchange) => {
    const [before, now, meminfo, disk] = await Promise.all([
      previousCpu,
      readCpuSample(),
      readFile('/proc/meminfo', 'utf8').then(parseMeminfo),
      statfs('/'),
    ])
    previousCpu = Promise.resolve(now)
    exchange.json({
      ts: Math.floor(Date.now() / 1000),
      cpu_count: os.availableParallelism(),
      cpu_used_pct: cpuUsedPercent(before, now),
      mem_total: meminfo.total,
      mem_used: meminfo.used,
      mem_cache: meminfo.cached,
      mem_total_mib: Math.floor(meminfo.total / MiB),
      mem_used_mib: Math.floor(meminfo.used / MiB),
      disk_used: (disk.blocks - disk.bfree) * disk.bsize,
      disk_total: disk.blocks * disk.bsize,
    })
  }
}

async function readCpuSample(): Promise<CpuSample> {
  return parseCpuSample(await readFile('/proc/stat', 'utf8'))
}
