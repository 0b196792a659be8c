import type { BuildContext, StepTools } from './build-context.js'
import { runStepScript } from './run-script.js'
import { StepError } from './step-error.js'
import { USER_SCRIPT } from './step-scripts.js'

/**
 * Names useradd accepts by default (and sudoers can spell without quoting): a letter or `_`
 * first, then letters, digits, `_`, `.`, `-`, at most 32 characters, an optional final `$`.
 */
const USER_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?$/

/** The user's sudoers drop-in: sudo skips names with a `.` in /etc/sudoers.d. */
export function sudoersFile(name: string): string {
  return `sandbar-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`
}

/**
 * USER `[name]` / `[name, "true"]` (§2.2): creates the user when missing (useradd
 * --create-home, or the account files written directly in images without useradd, such as
 * busybox ones); `"true"` adds passwordless sudo. The context user becomes it.
 */
export async function applyUser(
  args: string[],
  context: BuildContext,
  tools: StepTools,
): Promise<BuildContext> {
  const name = args[0] ?? ''
  if (name === '') throw new StepError('USER requires a username argument')
  if (!USER_NAME.test(name)) throw new StepError(`USER name '${name}' is not a valid user name`)
  const sudo = args[1] === 'true'
  // root exists in every image and needs no sudo: `USER root` (which fromDockerfile sends first) costs no round trip.
  if (name !== 'root') {
    await runStepScript(tools.sandbox, `USER ${name} failed`, USER_SCRIPT, [
      name,
      sudo ? 'true' : '',
      sudoersFile(name),
    ])
  }
  return { ...context, user: name }
}
