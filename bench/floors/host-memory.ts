import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'

/** The host's memory in use, MemTotal − MemAvailable, in MiB. */
export async function usedMemoryMiB(): Promise<number> {
  const meminfo = await readFile('/proc/meminfo', 'utf8')
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(meminfo)?.[1] ?? 0)
  return (kib('MemTotal') - kib('MemAvailable')) / 1024
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
