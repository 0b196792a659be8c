import type { BuildStep } from '../index.js'
import type { BuildContext, StepTools } from './build-context.js'
import { applyCopy } from './copy-step.js'
import { applyEnv } from './env-step.js'
import { applyRun } from './run-step.js'
import { StepError } from './step-error.js'
import { applyUser } from './user-step.js'
import { applyWorkdir } from './workdir-step.js'

/** The step kinds: §2.2's five, with ADD as COPY and ARG as ENV. */
export type StepKind = 'RUN' | 'COPY' | 'ENV' | 'WORKDIR' | 'USER'

const KINDS: Record<string, StepKind> = {
  RUN: 'RUN',
  COPY: 'COPY',
  ADD: 'COPY',
  ENV: 'ENV',
  ARG: 'ENV',
  WORKDIR: 'WORKDIR',
  USER: 'USER',
}

/** The kind a step type names (upper-cased first, §2.2), or undefined for an unknown type. */
export function stepKind(type: string): StepKind | undefined {
  return KINDS[type.toUpperCase()]
}

/**
 * Carries out one step in the build sandbox and returns the context after it. A failure the
 * recipe causes is a StepError whose message the SDK shows; an unknown type is §2.2's
 * `command type X is not implemented`.
 */
export async function applyStep(
  step: BuildStep,
  context: BuildContext,
  tools: StepTools,
): Promise<BuildContext> {
  const type = step.type.toUpperCase()
  switch (stepKind(type)) {
    case 'RUN':
      return applyRun(step.args, context, tools)
    case 'COPY':
      return applyCopy(type, step.args, step.filesHash, context, tools)
    case 'ENV':
      return applyEnv(type, step.args, context)
    case 'WORKDIR':
      return applyWorkdir(step.args, context, tools)
    case 'USER':
      return applyUser(step.args, context, tools)
    case undefined:
      throw new StepError(`command type ${step.type} is not implemented`)
  }
}
