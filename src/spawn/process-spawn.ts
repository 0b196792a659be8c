import { closeSync } from 'node:fs'
import { Socket } from 'node:net'
import bindings from 'bindings'

/** How a process ended: an exit code, or the number of the signal that killed it. */
export type ExitReason = { code: number } | { signal: number }

/** A descriptor slot's content in the child: a pipe to the caller, /dev/null, or this fd. */
export type StdioSlot = 'pipe' | 'ignore' | number

interface ProcessSpawnAddon {
  /**
   * posix_spawn (process-spawn.c): `stdio[i]` is -1 for a pipe, -2 for /dev/null or a
   * descriptor; answers `[pid, the caller's end of each slot's pipe or -1]`.
   */
  spawn(
    file: string,
    argv: string[],
    envp: string[],
    cwd: string | null,
    stdio: number[],
    newSession: boolean,
  ): number[]
  /** Calls back once the child has ended, reaped: `(code, null)` or `(null, signal)`. */
  watchExit(pid: number, callback: (code: number | null, signal: number | null) => void): void
}

const addon: ProcessSpawnAddon = bindings('process_spawn.node')

const PIPE = -1
const IGNORE = -2

export interface SpawnOptions {
  env: NodeJS.ProcessEnv
  /** Where it starts; the caller's working directory by default. */
  cwd?: string
  /** Descriptors 0, 1, 2 and any after them; a pipe only at 0, 1 or 2. */
  stdio: readonly [StdioSlot, StdioSlot, StdioSlot, ...number[]]
  /** Leads a session (and process group) of its own, so a signal reaches its whole group. */
  newSession?: boolean
}

export interface SpawnedProcess {
  pid: number
  /** The caller's ends of the slots that are pipes; null for the others. */
  stdin: Socket | null
  stdout: Socket | null
  stderr: Socket | null
  /** Resolves once the process has ended. */
  exited: Promise<ExitReason>
  /** Signals the process unless it has ended: once reaped, its PID may be another's. */
  kill(signal: NodeJS.Signals): void
}

/**
 * Starts `file` (searched on PATH when it has no slash) with `args`, without forking the
 * calling process (process-spawn.c). Throws, naming `file`, what posix_spawn failed with.
 */
export function spawnProcess(
  file: string,
  args: readonly string[],
  options: SpawnOptions,
): SpawnedProcess {
  const envp = Object.entries(options.env).flatMap(([name, value]) =>
    value === undefined ? [] : [`${name}=${value}`],
  )
  const slots = options.stdio.map((slot) =>
    slot === 'pipe' ? PIPE : slot === 'ignore' ? IGNORE : slot,
  )
  const [pid = -1, ...ends] = addon.spawn(
    file,
    [file, ...args],
    envp,
    options.cwd ?? null,
    slots,
    options.newSession ?? false,
  )
  const [stdinFD = -1, stdoutFD = -1, stderrFD = -1] = ends
  let exitWith: (reason: ExitReason) => void = () => {}
  const exited = new Promise<ExitReason>((resolve) => {
    exitWith = resolve
  })
  let ended = false
  try {
    addon.watchExit(pid, (code, signal) => {
      ended = true
      exitWith(signal !== null ? { signal } : { code: code ?? -1 })
    })
  } catch (error) {
    // Nothing could tell its end: the process must not run on unseen.
    process.kill(pid, 'SIGKILL')
    for (const fd of ends) if (fd >= 0) closeSync(fd)
    throw error
  }
  const end = (fd: number, readable: boolean): Socket | null =>
    fd < 0 ? null : new Socket({ fd, readable, writable: !readable })
  return {
    pid,
    stdin: end(stdinFD, false),
    stdout: end(stdoutFD, true),
    stderr: end(stderrFD, true),
    exited,
    kill: (signal) => {
      if (!ended) process.kill(pid, signal)
    },
  }
}
