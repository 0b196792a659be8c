import { spawn } from 'node:child_process'
import { AgentError } from './errors.js'

export interface HostCommandOptions {
  /** Written to the tool's stdin (an `nft -f -` script, say). */
  input?: string
  /** Extra environment, on top of the agent's own. */
  env?: Record<string, string>
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
  const child = spawn(file, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: options.env ? { ...process.env, ...options.env } : process.env,
  })
  const stdout: Buffer[] = []
  const stderr: Buffer[] = []
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
  child.stdin.end(options.input ?? '')
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', resolve)
  }).catch((error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error)
    throw new AgentError(`${file} could not start`, [file, ...args], null, reason)
  })
  if (exitCode !== 0) {
    const text = Buffer.concat(stderr).toString()
    throw new AgentError(`${file} ${args.join(' ')} failed`, [file, ...args], exitCode, text)
  }
  return Buffer.concat(stdout).toString()
}
