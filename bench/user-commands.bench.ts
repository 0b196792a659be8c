import { randomBytes } from 'node:crypto'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Sandbox } from 'e2b'
import { loopbackBulkTransfers } from './floors/loopback-http.js'
import { sampleMs, timeMs } from './stats.js'
import type { UserServe } from './user-serve.js'

const RUNS = 200
const WARMUP = 20

/** `commands.run('true')` round trips on one sandbox, with its defaults. */
export function sampleCommands(sandbox: Sandbox): Promise<number[]> {
  return sampleMs(RUNS, WARMUP, () => sandbox.commands.run('true'))
}

/**
 * What `commands.run('true')` has envd do, `bash -l -c true` as the sandbox's user, spawned
 * straight from a shell inside the sandbox and timed there with bash's own clock (no process
 * for the timing): the in-sandbox half of the command's floor, in ms, warm-up runs dropped.
 */
export async function sampleSpawnsInside(sandbox: Sandbox): Promise<number[]> {
  const warmup = 10
  const script = `for i in $(seq ${warmup + 50}); do s=$EPOCHREALTIME; bash -l -c true; e=$EPOCHREALTIME; echo $(( \${e/./} - \${s/./} )); done`
  const { stdout } = await sandbox.commands.run(script)
  const micros = stdout.trim().split('\n').map(Number)
  if (micros.length !== warmup + 50 || micros.some(Number.isNaN)) {
    throw new Error(`the spawn loop printed ${JSON.stringify(stdout)}`)
  }
  return micros.slice(warmup).map((value) => value / 1000)
}

/** `files.write` and `files.read` of a 5-byte file, round trips. */
export async function sampleSmallFiles(sandbox: Sandbox) {
  const file = '/home/user/bench-small.txt'
  const write = await sampleMs(RUNS, WARMUP, () => sandbox.files.write(file, 'hello'))
  const read = await sampleMs(RUNS, WARMUP, () => sandbox.files.read(file))
  await sandbox.files.remove(file)
  return { write, read }
}

export const BIG_FILE_MIB = 100
const BIG_RUNS = 3

/**
 * 100 MiB through `files.write` / `files.read`, beside `fs` writing and reading the same bytes
 * in the host's temporary directory, the file system the sandboxes' disks live on, and beside
 * `fetch` moving them over loopback with nothing behind it, the SDK's own transport.
 */
export async function sampleBigFiles(sandbox: Sandbox) {
  const data = randomBytes(BIG_FILE_MIB * 1024 * 1024)
  // The SDK takes an ArrayBuffer rather than a Buffer view: copy the bytes into one, once.
  const payload = new Uint8Array(data).buffer
  const remote = '/home/user/bench-big.bin'
  const local = path.join(tmpdir(), `sbt-bench-big-${randomBytes(4).toString('hex')}.bin`)
  try {
    const samples = {
      write: await sampleMs(BIG_RUNS, 1, () => sandbox.files.write(remote, payload)),
      read: await sampleMs(BIG_RUNS, 1, () => sandbox.files.read(remote, { format: 'bytes' })),
      fsWrite: await sampleMs(BIG_RUNS, 1, () => writeFile(local, data)),
      fsRead: await sampleMs(BIG_RUNS, 1, () => readFile(local)),
      transport: await loopbackBulkTransfers(data, BIG_RUNS, 1),
    }
    await sandbox.files.remove(remote)
    return samples
  } finally {
    await rm(local, { force: true })
  }
}

/**
 * `sandbox.pause()` and the `Sandbox.connect` that resumes it, each checked by a command.
 * `connect` sets the sandbox's timeout anew (5 minutes unless told): it keeps `timeoutMs`.
 */
export async function samplePauseResume(
  serve: UserServe,
  sandbox: Sandbox,
  count: number,
  timeoutMs: number,
) {
  const pause: number[] = []
  const resume: number[] = []
  for (let i = 0; i <= count; i++) {
    const paused = await timeMs(() => sandbox.pause())
    let resumed = sandbox
    const connected = await timeMs(async () => {
      resumed = await Sandbox.connect(sandbox.sandboxId, { ...serve.client, timeoutMs })
    })
    await resumed.commands.run('true')
    if (i === 0) continue
    pause.push(paused)
    resume.push(connected)
  }
  return { pause, resume, cycle: pause.map((value, i) => value + (resume[i] ?? Number.NaN)) }
}
