import { errnoCode } from '../../errno-code.js'
import type { Logger } from '../../logger.js'
import type { ProcessOutput } from './process-output.js'
import type { SpawnCommand } from './spawn-command.js'

/** What a client asked to run, as `List` reports it back (`ProcessConfig`, wire contract §3.5). */
export interface ProcessConfigView {
  cmd: string
  args: string[]
  envs: Record<string, string>
  cwd: string | undefined
}

/** What every process needs, pipe or PTY. */
export interface ProcessLaunch {
  command: SpawnCommand
  cwd: string
  env: Record<string, string>
  tag: string | undefined
  config: ProcessConfigView
  /** Created and subscribed to by the caller before the spawn, so no output is lost. */
  output: ProcessOutput
  logger: Logger
}

/** The signals `SendSignal` accepts (wire contract §3.5). */
export type ProcessSignal = 'SIGTERM' | 'SIGKILL'

/**
 * A process envd started, with pipes or a PTY behind one interface. Input methods throw an
 * `Error` whose message the RPC layer passes on; the pipe/PTY mismatch texts are envd's own
 * (wire contract §3.5).
 */
export interface ManagedProcess {
  readonly pid: number
  readonly tag: string | undefined
  readonly config: ProcessConfigView
  readonly output: ProcessOutput
  writeStdin(data: Uint8Array): Promise<void>
  writePty(data: Uint8Array): Promise<void>
  closeStdin(): void
  resize(cols: number, rows: number): void
  /**
   * Signals the process's whole group: it leads its own session, so the command's children
   * end with it. A group already gone is not an error.
   */
  signal(signal: ProcessSignal): void
}

/** Sends `signal` to the process group led by `pid`; false where there is no such group. */
export function signalGroup(pid: number, signal: ProcessSignal): boolean {
  return deliver(-pid, signal)
}

/** Sends `signal` to the process `pid` alone; false where it has gone. */
export function signalProcess(pid: number, signal: ProcessSignal): boolean {
  return deliver(pid, signal)
}

function deliver(target: number, signal: ProcessSignal): boolean {
  try {
    process.kill(target, signal)
    return true
  } catch (error) {
    if (!(errnoCode(error) === 'ESRCH')) throw error
    return false
  }
}

/** Messages of input errors, as E2B's envd words them (clients match on them). */
export const inputErrors = {
  stdinToPty: 'tty assigned to process — input should be written to the pty, not the stdin',
  ptyToPipe: 'tty not assigned to process — input should be written to the stdin, not the tty',
  stdinClosed: 'stdin not enabled or closed',
  closePtyStdin: 'cannot close stdin for PTY process — send Ctrl+D (0x04) instead',
  resizePipe: 'tty not assigned to process',
} as const
