import type { IPty } from 'node-pty'
import { exitStatus } from './exit-status.js'
import {
  inputErrors,
  type ManagedProcess,
  type ProcessConfigView,
  type ProcessLaunch,
  type ProcessSignal,
  signalGroup,
  signalProcess,
} from './managed-process.js'
import type { ProcessOutput } from './process-output.js'

/** Largest PTY `data` event (wire contract §3.5). */
export const PTY_CHUNK_BYTES = 16 * 1024

/** Terminal size; a zero from the client falls back to the classic 80×24. */
export interface PtySize {
  cols: number
  rows: number
}

/**
 * Spawns a process on a new pseudo-terminal. node-pty starts it in its own session (setsid), so
 * signals reach its whole group; `encoding: null` keeps the output as raw bytes.
 */
export async function startPtyProcess(
  launch: ProcessLaunch,
  size: PtySize,
): Promise<ManagedProcess> {
  // Loaded on the first terminal: most sandboxes never open one, and every envd start pays
  // for what it loads up front.
  const { spawn } = await import('node-pty')
  const terminal = spawn(launch.command.file, launch.command.args, {
    // The request's TERM wins, as every request env does (wire contract §3.5).
    name: launch.env.TERM ?? 'xterm-256color',
    cols: size.cols || 80,
    rows: size.rows || 24,
    cwd: launch.cwd,
    env: launch.env,
    encoding: null,
  })
  const { output } = launch
  // With `encoding: null` node-pty hands over Buffers, although its typings say string.
  terminal.onData((data: string | Buffer) => {
    output.publish('pty', typeof data === 'string' ? Buffer.from(data) : data)
  })
  output.attachFlow({ pause: () => terminal.pause(), resume: () => terminal.resume() })
  const pty = new PtyProcess(terminal, launch)
  // node-pty reports the exit only after the terminal's output has drained.
  terminal.onExit(({ exitCode, signal }) => {
    pty.exited = true
    output.finish(exitStatus(signal ? { signal } : { code: exitCode }))
  })
  return pty
}

class PtyProcess implements ManagedProcess {
  readonly pid: number
  readonly tag: string | undefined
  readonly config: ProcessConfigView
  readonly output: ProcessOutput
  /** node-pty has reported the exit: the pid may belong to another process now. */
  exited = false

  constructor(
    private readonly terminal: IPty,
    launch: ProcessLaunch,
  ) {
    this.pid = terminal.pid
    this.tag = launch.tag
    this.config = launch.config
    this.output = launch.output
  }

  async writeStdin(): Promise<void> {
    throw new Error(inputErrors.stdinToPty)
  }

  async writePty(data: Uint8Array): Promise<void> {
    if (data.length > 0) this.terminal.write(Buffer.from(data))
  }

  closeStdin(): void {
    throw new Error(inputErrors.closePtyStdin)
  }

  resize(cols: number, rows: number): void {
    this.terminal.resize(cols, rows)
  }

  signal(signal: ProcessSignal): void {
    // node-pty's child makes its session (setsid) after spawn has returned: a signal sent
    // before that finds no group, and goes to the child itself.
    if (!signalGroup(this.pid, signal) && !this.exited) signalProcess(this.pid, signal)
  }
}
