import { readFileSync, statfsSync } from 'node:fs'
import os from 'node:os'
import type { HttpExchange } from './http-exchange.js'
import { type CpuSample, cpuUsedPercent, parseCpuSample, parseMeminfo } from './proc-stats.js'

const MiB = 1024 * 1024

/**
 * `GET /metrics`: one snake_case record (wire contract §3.3). CPU use is measured since the
 * previous call (the first call measures since envd started), as gopsutil's Percent(0) does.
 *
 * Its reads are synchronous: procfs answers from memory and statfs from the superblock, while
 * the thread pool would wake up to four idle threads per read, each costlier than the read.
 * (The control plane's samples come from the host, Agent.usage; this route is for clients.)
 */
export function metricsRoute(): (exchange: HttpExchange) => void {
  let previousCpu = readCpuSample()
  return (exchange) => {
    const before = previousCpu
    const now = readCpuSample()
    const meminfo = parseMeminfo(readFileSync('/proc/meminfo', 'utf8'))
    const disk = statfsSync('/')
    previousCpu = now
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

function readCpuSample(): CpuSample {
  return parseCpuSample(readFileSync('/proc/stat', 'utf8'))
}
