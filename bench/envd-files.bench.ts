import { randomBytes } from 'node:crypto'
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Sandbox } from 'e2b'
import { percentile, report, sampleMs } from './stats.js'

const SIZE = 100 * 1024 * 1024
const RUNS = 3

/**
 * `files.write` / `files.read` of 100 MiB through envd, against `fs` writing and reading the
 * same bytes on the same disk. Target ≥ 0.5× the floor's throughput.
 */
export async function benchFiles(sandbox: Sandbox, homeOnHost: string): Promise<void> {
  const data = randomBytes(SIZE)
  // The SDK takes an ArrayBuffer rather than a Buffer view: copy the bytes into one, once.
  const payload = new Uint8Array(data).buffer
  const remote = '/home/user/bench-100mib.bin'
  const local = path.join(homeOnHost, 'user', 'bench-floor.bin')
  try {
    const write = await sampleMs(RUNS, 1, () => sandbox.files.write(remote, payload))
    const read = await sampleMs(RUNS, 1, () => sandbox.files.read(remote, { format: 'bytes' }))
    const fsWrite = await sampleMs(RUNS, 1, () => writeFile(local, data))
    const fsRead = await sampleMs(RUNS, 1, () => readFile(local))
    line('files.write 100 MiB', percentile(write, 50), percentile(fsWrite, 50))
    line('files.read 100 MiB', percentile(read, 50), percentile(fsRead, 50))
  } finally {
    await sandbox.files.remove(remote)
    await rm(local, { force: true })
  }
}

function line(name: string, figureMs: number, floorMs: number): void {
  const mibPerSecond = (msTaken: number): number => SIZE / 1024 / 1024 / (msTaken / 1000)
  const ratio = mibPerSecond(figureMs) / mibPerSecond(floorMs)
  report({
    name: `${name} p50`,
    figure: `${mibPerSecond(figureMs).toFixed(0)} MiB/s`,
    floor: `fs ${mibPerSecond(floorMs).toFixed(0)} MiB/s`,
    ratio,
    target: '≥ 0.5',
    ok: ratio >= 0.5,
  })
}
