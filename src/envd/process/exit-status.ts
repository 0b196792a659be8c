import type { ExitReason } from '../../spawn/process-spawn.js'

/** The fields of the contract's `EndEvent` (wire contract §3.5). */
export interface ExitStatus {
  exitCode: number
  exited: boolean
  status: string
  error: string | undefined
}

/** Go's descriptions of Linux signals (`syscall` package), as `ProcessState.String()` prints them. */
const goSignalNames: Readonly<Record<number, string>> = {
  1: 'hangup',
  2: 'interrupt',
  3: 'quit',
  4: 'illegal instruction',
  5: 'trace/breakpoint trap',
  6: 'aborted',
  7: 'bus error',
  8: 'floating point exception',
  9: 'killed',
  10: 'user defined signal 1',
  11: 'segmentation fault',
  12: 'user defined signal 2',
  13: 'broken pipe',
  14: 'alarm clock',
  15: 'terminated',
  16: 'stack fault',
  17: 'child exited',
  18: 'continued',
  19: 'stopped (signal)',
  20: 'stopped',
  21: 'stopped (tty input)',
  22: 'stopped (tty output)',
  23: 'urgent I/O condition',
  24: 'CPU time limit exceeded',
  25: 'file size limit exceeded',
  26: 'virtual timer expired',
  27: 'profiling timer expired',
  28: 'window changed',
  29: 'I/O possible',
  30: 'power failure',
  31: 'bad system call',
}

/**
 * The end of a process as envd reports it (wire contract §3.5): `status` is Go's
 * `ProcessState.String()`, a signalled process has `exitCode` -1 and `exited` false, and
 * `error` repeats the status whenever Go's `cmd.Wait()` fails (non-zero exit or a signal).
 */
export function exitStatus(reason: ExitReason): ExitStatus {
  if ('signal' in reason) {
    const status = `signal: ${goSignalNames[reason.signal] ?? `signal ${reason.signal}`}`
    return { exitCode: -1, exited: false, status, error: status }
  }
  const status = `exit status ${reason.code}`
  return {
    exitCode: reason.code,
    exited: true,
    status,
    error: reason.code === 0 ? undefined : status,
  }
}
