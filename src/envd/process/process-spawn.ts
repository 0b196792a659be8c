import { closeSync } from 'node:fs'
import { Socket } from 'node:net'
import bindings from 'bindings'
import type { ExitReason } from './exit-status.js'

interface ProcessSpawnAddon {
  /** posix_spawn with pipes (process-spawn.c): `[pid, stdin fd or -1, stdout fd, stderr fd]`. */
  spawn(
    file: string,
    argv: string[],
    envp: string[],
    cwd: string,
    stdinPipe: boolean,
  ): [number, number, number, number]
  /** Calls back once the child has ended, reaped: `(code, null)` or `(null, signal)`. */
  watchExit(pid: number, callback: (code: number | null, signal: number | null) => void): void
}

const addon: ProcessSpawnAddon = bindings('process_spawn.node')

export interface SpawnedProcess {
  pid: number
  /** The process's stdin, or null when it reads /dev/null. */
  stdin: Socket | null
  stdout: Socket
  stderr: Socket
  /** Resolves once the process has ended. */
  exited: Promise<ExitReason>
}

export interface SpawnOptions {
  cwd: string
  env: Record<string, string>
  /** A pipe for stdin; else the process reads /dev/null. */
  stdin: boolean
}

/**
 * Starts `file` with `args` (argv[0] is `file`) as the leader of a new session, its stdout and
 * stderr piped, without forking envd (process-spawn.c). Throws what posix_spawn failed with.
 */
export function spawnProcess(file: string, args: string[], options: SpawnOptions): SpawnedProcess {
  const envp = Object.entries(options.env).map(([name, value]) => `${name}=${value}`)
  const [pid, stdinFd, stdoutFd, stderrFd] = addon.spawn(
    file,
    [file, ...args],
    envp,
    options.cwd,
    options.stdin,
  )
  let exitWith: (reason: ExitReason) => void = () => {}
  const exited = new Promise<ExitReason>((resolve) => {
    exitWith = resolve
  })
  try {
    addon.watchExit(pid, (code, signal) =>
      exitWith(signal !== null ? { signal } : { code: code ?? -1 }),
    )
  } catch (error) {
    // Nothing could tell its end: the process must not run on unseen.
    process.kill(-pid, 'SIGKILL')
    for (const fd of [stdinFd, stdoutFd, stderrFd]) if (fd >= 0) closeSync(fd)
    throw error
  }
  return {
    pid,
    stdin: stdinFd >= 0 ? new Socket({ fd: stdinFd, readable: false, writable: true }) : null,
    stdout: new Socket({ fd: stdoutFd, readable: true, writable: false }),
    stderr: new Socket({ fd: stderrFd, readable: true, writable: false }),
    exited,
  }
}
