import type { BuildContext, StepTools } from './build-context.js'
import { contextLookup } from './env-step.js'
import { runStepScript } from './run-script.js'
import { expandShellValue } from './shell-expansion.js'
import { resolveWorkdir } from './step-paths.js'
import { WORKDIR_SCRIPT } from './step-scripts.js'

/**
 * WORKDIR `[path]` (§2.2): the path, env-expanded as Docker's WORKDIR is, resolved against the
 * current workdir (or `/`); missing directories are made, owned by the context user from the
 * first new one down; the context's workdir becomes it.
 */
export async function applyWorkdir(
  args: string[],
  context: BuildContext,
  tools: StepTools,
): Promise<BuildContext> {
  const workdir = resolveWorkdir(
    expandShellValue(args[0] ?? '', contextLookup(context)),
    context.workdir,
  )
  await runStepScript(tools.sandbox, `WORKDIR ${workdir} failed`, WORKDIR_SCRIPT, [
    workdir,
    context.user,
  ])
  return { ...context, workdir }
}
