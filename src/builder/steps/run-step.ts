import type { BuildContext, StepTools } from './build-context.js'
import { StepError } from './step-error.js'
import { RUN_SCRIPT } from './step-scripts.js'

/** RUN's argv: the login shell of §2.2, or sh where the image has no bash. */
export function runArgv(command: string): string[] {
  return ['/bin/sh', '-c', RUN_SCRIPT, 'sh', command]
}

/**
 * RUN `[command]` / `[command, user]` (§2.2): as that user or the context user, in the context
 * workdir with the context env; the output goes to the build log. The context is unchanged.
 */
export async function applyRun(
  args: string[],
  context: BuildContext,
  tools: StepTools,
): Promise<BuildContext> {
  const command = args[0]
  if (!command) throw new StepError('RUN requires a command')
  const user = args[1] || context.user
  const code = await tools.sandbox.run(runArgv(command), {
    user,
    ...(context.workdir === undefined ? {} : { cwd: context.workdir }),
    envs: context.env,
    ...(tools.onOutput ? { onOutput: tools.onOutput } : {}),
  })
  if (code !== 0) throw new StepError(`RUN command '${command}' exited with code ${code}`)
  return context
}
