import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { type Emit, protocolEmitter, serveRequests, timestamp } from './worker-protocol.js'

/** Output still in the pipes when the status arrives on fd 3 is read within this time. */
const DRAIN_MS = 20

/**
 * The bash worker: one persistent `bash` whose state (variables, functions, cwd) cells share.
 * Each cell is sourced from a file; its exit status comes back on fd 3. A non-zero status is
 * an error event `ExitCode` whose value is the status (as bash_kernel reports it). SIGINT
 * kills the running cell with its whole process group and starts bash again in the same
 * cwd: shell variables set before are lost, which the error value says.
 */
export function runBashWorker(): void {
  const emit = protocolEmitter()
  let currentId = 0
  let statusOf: ((status: number | 'interrupted') => void) | undefined
  let interrupting = false
  let bash = startBash(process.cwd())

  function startBash(cwd: string): ChildProcess {
    const child = spawn('bash', ['--norc', '--noprofile'], {
      cwd,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    })
    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream]?.on('data', (chunk: Buffer) =>
        emit({ id: currentId, type: stream, text: chunk.toString(), timestamp: timestamp() }),
      )
    }
    const statuses = createInterface({ input: child.stdio[3] as NodeJS.ReadableStream })
    statuses.on('line', (line) => statusOf?.(Number(line)))
    child.on('exit', (code) => {
      if (child !== bash) return
      // `exit` in a cell ends the shell: that cell fails and a new shell takes over.
      const status = interrupting ? 'interrupted' : (code ?? 1)
      bash = startBash(cwdOf(child) ?? process.cwd())
      statusOf?.(status)
    })
    return child
  }

  process.on('SIGINT', () => {
    if (statusOf === undefined || bash.pid === undefined) return
    interrupting = true
    process.kill(-bash.pid, 'SIGKILL')
  })

  serveRequests(async ({ id, code, silent }) => {
    currentId = id
    if (!silent) emit({ id, type: 'number_of_executions', execution_count: nextCount() })
    const cellDir = mkdtempSync(path.join(tmpdir(), 'sandbar-bash-'))
    const cellFile = path.join(cellDir, 'cell.sh')
    writeFileSync(cellFile, code)
    const status = new Promise<number | 'interrupted'>((resolve) => {
      statusOf = resolve
    })
    bash.stdin?.write(`. ${cellFile} </dev/null\nprintf '%s\\n' "$?" >&3\n`)
    const result = await status
    rmSync(cellDir, { recursive: true, force: true })
    statusOf = undefined
    interrupting = false
    await new Promise((resolve) => setTimeout(resolve, DRAIN_MS))
    reportStatus(emit, id, result)
  })
  emit({ type: 'ready' })
}

let executionCount = 0
const nextCount = () => {
  executionCount += 1
  return executionCount
}

function reportStatus(emit: Emit, id: number, status: number | 'interrupted'): void {
  if (status === 0) {
    emit({ id, type: 'done', status: 'ok' })
    return
  }
  const error =
    status === 'interrupted'
      ? { name: 'Interrupted', value: 'Execution was interrupted; the shell was started again' }
      : { name: 'ExitCode', value: String(status) }
  emit({ id, type: 'error', ...error, traceback: '' })
  emit({ id, type: 'done', status: 'error' })
}

/** The cwd a dead shell had, so that its successor starts there (Linux /proc). */
function cwdOf(child: ChildProcess): string | undefined {
  try {
    return readlinkSync(`/proc/${child.pid}/cwd`)
  } catch {
    return undefined
  }
}
