import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { ms, percentile, report } from './stats.js'

const RUNS = 10
const PORT = 49987

/**
 * envd process start → first `/health` 204, and its idle resident memory. Absolute targets
 * (≤ 150 ms, ≤ 45 MiB); the floor is a bare node HTTP server started the same way, as envd
 * starts in sandboxes: without V8 flags.
 */
export async function benchStart(bundle: string): Promise<void> {
  const envd = await startTimes([bundle, '--port', String(PORT)])
  const floorScript =
    "require('http').createServer((q,s)=>{s.statusCode=204;s.end()}).listen(Number(process.argv[1]))"
  const bare = await startTimes(['-e', floorScript, String(PORT)])
  const p50 = percentile(envd.times, 50)
  report({
    name: 'envd start → /health 204 p50',
    figure: ms(p50),
    floor: `bare node server ${ms(percentile(bare.times, 50))}`,
    ratio: p50 / percentile(bare.times, 50),
    target: '≤ 150 ms absolute',
    ok: p50 <= 150,
  })
  report({
    name: 'envd idle RSS',
    figure: `${envd.rssMiB.toFixed(1)} MiB (anonymous ${envd.anonMiB.toFixed(1)} MiB)`,
    floor: `bare node server ${bare.rssMiB.toFixed(1)} MiB (anonymous ${bare.anonMiB.toFixed(1)} MiB)`,
    ratio: envd.rssMiB / bare.rssMiB,
    target: '≤ 45 MiB absolute',
    ok: envd.rssMiB <= 45,
  })
}

interface StartFigures {
  times: number[]
  rssMiB: number
  /** Anonymous memory: what each sandbox's envd adds; the node binary's pages are shared. */
  anonMiB: number
}

async function startTimes(args: string[]): Promise<StartFigures> {
  const times: number[] = []
  let memory = { rssMiB: 0, anonMiB: 0 }
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint()
    const child = spawn(process.execPath, args, {
      stdio: 'ignore',
      env: { PATH: process.env.PATH },
    })
    try {
      await waitForHealth()
      times.push(Number(process.hrtime.bigint() - start) / 1e6)
      await new Promise((resolve) => setTimeout(resolve, 300))
      memory = await residentMiB(child)
    } finally {
      child.kill('SIGKILL')
      await once(child, 'exit')
    }
  }
  return { times, ...memory }
}

async function waitForHealth(): Promise<void> {
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${PORT}/health`).then(
      (r) => r.status === 204,
      () => false,
    )
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

async function residentMiB(child: ChildProcess): Promise<{ rssMiB: number; anonMiB: number }> {
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8')
  const mib = (field: string): number =>
    Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024
  return { rssMiB: mib('VmRSS'), anonMiB: mib('RssAnon') }
}
