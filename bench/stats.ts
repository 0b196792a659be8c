import { appendFileSync } from 'node:fs'

/** Percentile of a sample (nearest rank), in the sample's unit. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank] ?? Number.NaN
}

/** Milliseconds taken by `fn`, measured with the monotonic clock. */
export async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint()
  await fn()
  return Number(process.hrtime.bigint() - start) / 1e6
}

/** Runs `fn` `warmup` times unmeasured, then `count` times measured. */
export async function sampleMs(
  count: number,
  warmup: number,
  fn: () => Promise<unknown>,
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn()
  const samples: number[] = []
  for (let i = 0; i < count; i++) samples.push(await timeMs(fn))
  return samples
}

/** One benchmark line: the figure, its floor from the same run, and the ratio to the target. */
export interface ReportLine {
  name: string
  figure: string
  floor: string
  ratio: number
  target: string
  ok: boolean
}

/** A report line as the results file keeps it: which section printed it, and how. */
export interface RecordedLine extends ReportLine {
  section: string
  /** Sandbar's own parts (agent, envd) rather than what a user of the SDK sees. */
  diagnostic: boolean
}

let recording: { section: string; diagnostic: boolean; file: string | undefined } | undefined

/**
 * Labels this process's lines by `section`, and appends them to `file` (one JSON object a
 * line) when given: each section runs in a process of its own, and the run collects them.
 */
export function recordReports(section: string, diagnostic: boolean, file?: string): void {
  recording = { section, diagnostic, file }
}

export function report(line: ReportLine): void {
  const label = recording?.diagnostic ? '(diagnostic) ' : ''
  console.log(
    `${line.ok ? 'ok  ' : 'MISS'} ${label}${line.name}: ${line.figure} | floor: ${line.floor} | ratio ${line.ratio.toFixed(2)} (target ${line.target})`,
  )
  if (recording?.file !== undefined) {
    const { section, diagnostic } = recording
    const recorded: RecordedLine = { ...line, section, diagnostic }
    appendFileSync(recording.file, `${JSON.stringify(recorded)}\n`)
  }
}

export const ms = (value: number): string => `${value.toFixed(2)} ms`
