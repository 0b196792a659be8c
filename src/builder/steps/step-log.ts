import type { BuildStep } from '../index.js'

/** A step's text in the build log: its type upper-cased, then its non-empty args (§2.4). */
export function describeStep(step: Pick<BuildStep, 'type' | 'args'>): string {
  return [step.type.toUpperCase(), ...step.args.filter((arg) => arg !== '')].join(' ')
}

/** The phase prefix of step `index` (1-based) of `total` (§2.4: `builder i/N`). */
export function stepLogPrefix(index: number, total: number): string {
  return `builder ${index}/${total}`
}

/**
 * A phase's log line (§2.4): `[<prefix>] <text> [<hash>]`, with `CACHED ` in front when the
 * phase's layer came from the cache — e.g. `[builder 1/3] RUN pip install x [<hash>]`,
 * `CACHED [base] FROM e2bdev/base [<hash>]`.
 */
export function formatPhaseLine(
  prefix: string,
  text: string,
  hash: string,
  cached: boolean,
): string {
  return `${cached ? 'CACHED ' : ''}[${prefix}] ${text} [${hash}]`
}

/** The log line of step `index` (1-based) of `total`. */
export function formatStepLine(
  index: number,
  total: number,
  step: Pick<BuildStep, 'type' | 'args'>,
  hash: string,
  cached: boolean,
): string {
  return formatPhaseLine(stepLogPrefix(index, total), describeStep(step), hash, cached)
}
