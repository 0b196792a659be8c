import { closeSync, openSync, readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import { finished } from 'node:stream/promises'
import { type SpawnedProcess, spawnProcess } from '../spawn/process-spawn.js'
import { AgentError } from './errors.js'

export interface HostCommandOptions {
  /** Written to the tool's stdin (an `nft -f -` script, say). */
  input?: string
  /** An open file the tool gets as its stdin instead (and passes on, as `crun run` does). */
  stdinFD?: number
  /** Extra environment, on top of the agent's own. */
  env?: Record<string, string>
  /**
   * Sends the tool's stdout and stderr to this file (appended) instead of pipes, for a tool
   * that leaves a process behind holding them (`crun run --detach`: host-facts, or the caller
   * waits for the container to exit). On failure the file's text is the error's stderr.
   */
  outputFile?: string
  /** Called with each line the tool writes to stdout or stderr as it arrives (build progress). */
  onLine?: (line: string) => void
  /** The tool's working directory (relative paths in its arguments start there). */
  cwd?: string
  /** Open files the tool inherits as descriptors 3, 4, … in this order (CRIU's --inherit-fd). */
  inheritFDs?: readonly number[]
  /** SIGKILLs the tool after this long, and fails (a tool that can hang, such as CRIU). */
  timeoutMs?: number
}

/**
 * Runs a host tool with an argv array (never a shell string) and resolves with its stdout.
 * The one place a failed run becomes a typed AgentError carrying the tool's stderr.
 */
export async function runHostCommand(
  file: string,
  args: readonly string[],
  options: HostCommandOptions = {},
): Promise<string> {
  const outputFD = options.outputFile === undefined ? undefined : openSync(options.outputFile, 'a')
  let child: SpawnedProcess
  try {
    child = spawnProcess(file, args, {
      // No input: /dev/null, so a tool (or a container it leaves running) never holds our pipe.
      stdio: [
        options.stdinFD ?? (options.input === undefined ? 'ignore' : 'pipe'),
        outputFD ?? 'pipe',
        outputFD ?? 'pipe',
        ...(options.inheritFDs ?? []),
      ],
      env: options.env ? { ...process.env, ...options.env } : process.env,
      cwd: options.cwd,
    })
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new AgentError(`${file} could not start`, [file, ...args], null, reason)
  } finally {
    if (outputFD !== undefined) closeSync(outputFD)
  }
  const stdout: Buffer[] = []
  const stderr: Buffer[] = []
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk))
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk))
  if (options.onLine !== undefined) {
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) forwardLines(stream, options.onLine)
    }
  }
  // A tool that exits before reading its input closes the pipe; its exit code tells the story.
  child.stdin?.on('error', () => undefined)
  child.stdin?.end(options.input ?? '')
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          stderr.push(Buffer.from(`\nkilled after ${options.timeoutMs} ms`))
          child.kill('SIGKILL')
        }, options.timeoutMs)
  // Its output read to the end, as well as its exit: a failure's stderr is whole.
  const outputs = [child.stdout, child.stderr].flatMap((stream) =>
    stream === null ? [] : [finished(stream).catch(() => undefined)],
  )
  const [reason] = await Promise.all([child.exited, ...outputs]).finally(() => clearTimeout(timer))
  const exitCode = 'code' in reason ? reason.code : null
  if (exitCode !== 0) {
    const text =
      options.outputFile === undefined
        ? Buffer.concat(stderr).toString()
        : readFileSync(options.outputFile, 'utf8')
    throw new AgentError(`${file} ${args.join(' ')} failed`, [file, ...args], exitCode, text)
  }
  return Buffer.concat(stdout).toString()
}

function forwardLines(stream: Readable, onLine: (line: string) => void): void {
  createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on('line', onLine)
}
