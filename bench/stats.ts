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
export function report(line: {
  name: string
  figure: string
  floor: string
  ratio: number
  target: string
  ok: boolean
}): void {
  console.log(
    `${line.ok ? 'ok  ' : 'MISS'} ${line.name}: ${line.figure} | floor: ${line.floor} | ratio ${line.ratio.toFixed(2)} (target ${line.target})`,
  )
}

export const ms = (value: number): string => `${value.toFixed(2)} ms`
