/**
 * A step failed because of what the recipe asks (a bad argument, a command that exits non-zero):
 * its message is the build's `reason.message` for the SDK. Failures of the build sandbox itself
 * (envd unreachable, say) are not StepErrors and keep their own type.
 */
export class StepError extends Error {
  override readonly name = 'StepError'
}
