import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

/** A pull step failed; the message carries the tool's own reason (the registry's words). */
export class ImagePullError extends Error {
  override readonly name = 'ImagePullError'
}

/**
 * The reason in a line skopeo or umoci prints on failure: both log through logrus, so a fatal
 * line reads `time="…" level=fatal msg="…: unauthorized: authentication required"`; the
 * `msg` text (unquoted) is the reason, and any other line is taken as it is.
 */
export function toolErrorReason(stderr: string): string {
  const lines = stderr.split('\n').filter((line) => line.trim() !== '')
  const fatal = lines.findLast((line) => /level=(fatal|error)/.test(line)) ?? lines.at(-1) ?? ''
  const message = /msg="((?:[^"\\]|\\.)*)"/.exec(fatal)?.[1]
  if (message === undefined) return fatal.trim()
  // skopeo 1.9 puts every failure to open the source, a registry's refusal included, under
  // `Error parsing image name "…": `, which names no parsing problem: the rest is the reason.
  return message.replace(/\\(.)/g, '$1').replace(/^Error parsing image name "[^"]*": /, '')
}

export interface ImageToolOptions {
  /** Says what failed, before the tool's reason, in the error. */
  what: string
  /** Called with each line the tool prints on stderr, and on stdout when `logStdout`. */
  onLine: (line: string) => void
  /** stdout is progress to show, not data to parse (`skopeo copy`). */
  logStdout?: boolean
}

/**
 * Runs skopeo or umoci with an argv array (never a shell string), passing the lines it prints
 * to `onLine`, and resolves with its stdout. A failed run throws an ImagePullError whose
 * message is `what` and the tool's reason.
 */
export async function runImageTool(
  file: string,
  args: readonly string[],
  { what, onLine, logStdout = false }: ImageToolOptions,
): Promise<Buffer> {
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const stdout: Buffer[] = []
  const stderr: Buffer[] = []
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
  for (const stream of logStdout ? [child.stdout, child.stderr] : [child.stderr]) {
    createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on('line', onLine)
  }
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', resolve)
  }).catch((error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error)
    throw new ImagePullError(`${what}: ${file} could not start: ${reason}`)
  })
  if (exitCode !== 0) {
    const reason = toolErrorReason(Buffer.concat(stderr).toString())
    throw new ImagePullError(`${what}: ${reason || `${file} exited with ${exitCode}`}`)
  }
  return Buffer.concat(stdout)
}
