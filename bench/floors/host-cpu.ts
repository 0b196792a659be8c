import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on every Linux build). */
const TICKS_PER_SECOND = 100

/**
 * The host's CPU time in use over `windowMs`, in ms per second of wall time: user, nice,
 * system, irq and softirq across all CPUs, from /proc/stat (steal and idle left out).
 */
export async function hostBusyMsPerSecond(windowMs: number): Promise<number> {
  const before = await busyTicks()
  const started = performance.now()
  await sleep(windowMs)
  const ticks = (await busyTicks()) - before
  return (ticks * 1000) / TICKS_PER_SECOND / ((performance.now() - started) / 1000)
}

async function busyTicks(): Promise<number> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? ''
  const [user, nice, system, , , irq, softirq] = line.trim().split(/\s+/).slice(1).map(Number)
  return (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0)
}

/**
 * An idle `node` on the host waking once a second, as envd's port scan does: its own CPU time
 * over `windowMs`, in ms per second, the floor of an idle sandbox's.
 */
export async function idleNodeCpuMsPerSecond(windowMs: number): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
  try {
    // Past its start, whose CPU is not idle.
    await sleep(1_000)
    const before = await processCpuNs(child.pid)
    await sleep(windowMs)
    const ns = (await processCpuNs(child.pid)) - before
    return ns / 1e6 / (windowMs / 1000)
  } finally {
    const exited = once(child, 'exit')
    child.kill('SIGKILL')
    await exited
  }
}

/** A process's time on a CPU in ns, from /proc/<pid>/schedstat: finer than clock ticks. */
async function processCpuNs(pid: number | undefined): Promise<number> {
  const [onCpu] = (await readFile(`/proc/${pid}/schedstat`, 'utf8')).split(' ')
  return Number(onCpu)
}
