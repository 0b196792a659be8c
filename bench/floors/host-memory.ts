import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * The host's memory in use, MemTotal − MemAvailable, in MiB, once this process has collected
 * its garbage: the buffers an earlier row left behind (the 100 MiB file rows' come to hundreds
 * of MiB) stay until V8 collects them, which may be midway through a later row.
 */
export async function usedMemoryMiB(): Promise<number> {
  const { gc } = globalThis
  if (gc === undefined)
    throw new Error('a bench section runs under node --expose-gc, as bench/run.ts starts it')
  gc()
  const meminfo = await readFile('/proc/meminfo', 'utf8')
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(meminfo)?.[1] ?? 0)
  return (kib('MemTotal') - kib('MemAvailable')) / 1024
}

/** Readings of usedMemoryMiB 1 s apart that hold within this much count as settled. */
const SETTLED_READINGS = 3
const SETTLED_WITHIN_MIB = 8
const SETTLE_TIMEOUT_MS = 180_000

/**
 * usedMemoryMiB once it holds still, for a baseline. Memory the host has just freed (the
 * sandboxes of an earlier row) comes back to MemAvailable slowly on this VM: missing from
 * MemFree yet in none of AnonPages, Cached, Slab and the like, it drains at ~15 MiB/s, 550 MiB
 * of it at one row's start. A baseline read before that made the row's sandboxes look smaller
 * than nothing.
 */
export async function settledUsedMemoryMiB(): Promise<number> {
  const readings: number[] = []
  const deadline = Date.now() + SETTLE_TIMEOUT_MS
  for (;;) {
    readings.push(await usedMemoryMiB())
    const last = readings.slice(-SETTLED_READINGS)
    const spread = Math.max(...last) - Math.min(...last)
    if (last.length === SETTLED_READINGS && spread <= SETTLED_WITHIN_MIB) return Math.max(...last)
    if (Date.now() > deadline) {
      console.warn(
        `the host's memory still moved ${spread.toFixed(0)} MiB in 2 s after ${SETTLE_TIMEOUT_MS / 1000} s`,
      )
      return Math.max(...last)
    }
    await sleep(1_000)
  }
}

/**
 * An idle `node` on the host, the floor of an idle sandbox (whose envd is a node process):
 * its proportional set size once it settles, so pages it shares with other node processes
 * count by their share, as the sandboxes' shared pages do in the host's figure.
 */
export async function idleNodePssMiB(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], { stdio: 'ignore' })
  try {
    await sleep(1_000)
    const rollup = await readFile(`/proc/${child.pid}/smaps_rollup`, 'utf8')
    const pss = /^Pss:\s+(\d+) kB/m.exec(rollup)?.[1]
    if (pss === undefined) throw new Error('no Pss in smaps_rollup')
    return Number(pss) / 1024
  } finally {
    const exited = once(child, 'exit')
    child.kill('SIGKILL')
    await exited
  }
}
