import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { type Emit, protocolEmitter, serveRequests, timestamp } from './worker-protocol.js'

/** Output still in the pipes when the status arrives on fd 3 is read within this time. */
const DRAIN_MS = 20

/**
 * The bash worker: one persistent `bash` whose state (variables, functions, cwd) cells share.
 * Each cell is sourced from a file; its exit status comes back on fd 3. A non-zero status is
 * an error event `ExitCode` whose value is the status (as bash_kernel reports it).
 *
 * bash cannot abandon a sourced file half-way, so SIGINT kills the shell's whole process
 * group and this worker with it, as do SIGTERM and a cell's `exit`: the server then starts a new
 * worker and puts back the context's cwd and sandbox env vars, as after a restart.
 */
export function runBashWorker(): void {
  const emit = protocolEmitter()
  let currentId = 0
  let statusOf: ((status: number) => void) | undefined
  const bash = spawn('bash', ['--norc', '--noprofile'], {
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  })
  for (const stream of ['stdout', 'stderr'] as const) {
    bash[stream].on('data', (chunk: Buffer) =>
      emit({ id: currentId, type: stream, text: chunk.toString(), timestamp: timestamp() }),
    )
  }
  createInterface({ input: bash.stdio[3] as NodeJS.ReadableStream }).on('line', (line) =>
    statusOf?.(Number(line)),
  )
  const cellDir = mkdtempSync(path.join(tmpdir(), 'sandbar-bash-'))
  const cellFile = path.join(cellDir, 'cell.sh')
  const end = (code: number) => {
    if (bash.exitCode === null && bash.pid !== undefined) process.kill(-bash.pid, 'SIGKILL')
    rmSync(cellDir, { recursive: true, force: true })
    process.exit(code)
  }
  bash.on('exit', () => end(1))
  process.on('SIGINT', () => end(130))
  // The server's restart and removal: the shell's children go too.
  process.on('SIGTERM', () => end(143))

  let executionCount = 0
  serveRequests(async ({ id, code, silent }) => {
    currentId = id
    if (!silent) {
      executionCount += 1
      emit({ id, type: 'number_of_executions', execution_count: executionCount })
    }
    writeFileSync(cellFile, code)
    const status = new Promise<number>((resolve) => {
      statusOf = resolve
    })
    bash.stdin.write(`. ${cellFile} </dev/null\nprintf '%s\\n' "$?" >&3\n`)
    const result = await status
    statusOf = undefined
    await new Promise((resolve) => setTimeout(resolve, DRAIN_MS))
    reportStatus(emit, id, result)
  })
  emit({ type: 'ready' })
}

function reportStatus(emit: Emit, id: number, status: number): void {
  if (status !== 0) {
    emit({ id, type: 'error', name: 'ExitCode', value: String(status), traceback: '' })
  }
  emit({ id, type: 'done', status: status === 0 ? 'ok' : 'error' })
}
