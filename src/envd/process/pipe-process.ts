import type { Socket } from 'node:net'
import type { Writable } from 'node:stream'
import { finished } from 'node:stream/promises'
import { type SpawnedProcess, spawnProcess } from '../../spawn/process-spawn.js'
import { exitStatus } from './exit-status.js'
import {
  inputErrors,
  type ManagedProcess,
  type ProcessConfigView,
  type ProcessLaunch,
  type ProcessSignal,
  signalGroup,
} from './managed-process.js'
import type { ProcessOutput } from './process-output.js'

/** Largest stdout/stderr `data` event (wire contract §3.5). */
export const PIPE_CHUNK_BYTES = 32 * 1024

/**
 * Spawns a process with stdout and stderr pipes, and a stdin pipe when `stdin` is true (else
 * `/dev/null`). It leads a new session, so signals reach its whole group.
 */
export async function startPipeProcess(
  launch: ProcessLaunch,
  stdin: boolean,
): Promise<ManagedProcess> {
  const child = spawnProcess(launch.command.file, launch.command.args, {
    cwd: launch.cwd,
    env: launch.env,
    stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    newSession: true,
  })
  const { output } = launch
  const { stdout, stderr } = pipesOf(child)
  stdout.on('data', (chunk: Buffer) => output.publish('stdout', chunk))
  stderr.on('data', (chunk: Buffer) => output.publish('stderr', chunk))
  output.attachFlow({
    pause: () => {
      stdout.pause()
      stderr.pause()
    },
    resume: () => {
      stdout.resume()
      stderr.resume()
    },
  })
  // The end event comes after the exit *and* after stdout and stderr reached EOF: it follows
  // all output (wire contract §3.5).
  const outputEnded = (stream: Socket) =>
    finished(stream).catch((error: unknown) => {
      launch.logger.warn({ pid: child.pid, err: error }, 'user process output failed')
    })
  void Promise.all([child.exited, outputEnded(stdout), outputEnded(stderr)]).then(([reason]) =>
    output.finish(exitStatus(reason)),
  )
  return new PipeProcess(child, launch)
}

/** The output pipes spawnProcess opened, as asked. */
function pipesOf(child: SpawnedProcess): { stdout: Socket; stderr: Socket } {
  if (child.stdout === null || child.stderr === null) throw new Error('spawned without pipes')
  return { stdout: child.stdout, stderr: child.stderr }
}

class PipeProcess implements ManagedProcess {
  readonly pid: number
  readonly tag: string | undefined
  readonly config: ProcessConfigView
  readonly output: ProcessOutput
  private stdin: Writable | null

  constructor(child: SpawnedProcess, launch: ProcessLaunch) {
    this.pid = child.pid
    this.tag = launch.tag
    this.config = launch.config
    this.output = launch.output
    this.stdin = child.stdin
    // A process that exits or closes its stdin makes the next write fail with EPIPE; that is
    // the writer's error to report, never a reason for envd to crash.
    this.stdin?.on('error', (error) => {
      launch.logger.debug({ pid: this.pid, err: error }, 'stdin pipe closed')
      this.stdin = null
    })
  }

  async writeStdin(data: Uint8Array): Promise<void> {
    const stdin = this.stdin
    if (stdin === null || stdin.writableEnded) throw new Error(inputErrors.stdinClosed)
    if (data.length === 0) return
    await new Promise<void>((resolve, reject) => {
      stdin.write(data, (error) => {
        if (error) {
          reject(new Error(`error writing to stdin of process '${this.pid}': ${error.message}`))
        } else resolve()
      })
    })
  }

  async writePty(): Promise<void> {
    throw new Error(inputErrors.ptyToPipe)
  }

  closeStdin(): void {
    // Closing twice, or a process started without stdin, is fine: the process has EOF either way.
    this.stdin?.end()
    this.stdin = null
  }

  resize(): void {
    throw new Error(inputErrors.resizePipe)
  }

  signal(signal: ProcessSignal): void {
    signalGroup(this.pid, signal)
  }
}
