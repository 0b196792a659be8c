/**
 * Step semantics (§2.2, §2.4) for the builder's pipeline: what each recipe step does in a build
 * sandbox, the finalize phase, the log lines and the cache keys.
 */
export { applyStep, type StepKind, stepKind } from './apply-step.js'
export type {
  BuildContext,
  OutputStream,
  StepFiles,
  StepSandbox,
  StepTools,
} from './build-context.js'
export { E2B_METADATA_PATH, e2bMetadata, finalizeTemplate } from './finalize.js'
export { StepError } from './step-error.js'
export { finalizeKey, stepKey } from './step-key.js'
export { describeStep, formatPhaseLine, formatStepLine, stepLogPrefix } from './step-log.js'
