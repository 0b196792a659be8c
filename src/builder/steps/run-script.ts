import { DEFAULT_PATH } from '../../envd/index.js'
import type { StepSandbox } from './build-context.js'
import { StepError } from './step-error.js'

/** How many lines of a failed script's output its error quotes. */
const QUOTED_LINES = 5

/**
 * Runs one of the steps' own scripts as root: the script is constant text and every value
 * reaches it as a positional argument, never inside it. The recipe's env stays out (a
 * user's `LD_PRELOAD` or `PATH` must not change how a COPY lands); a non-zero exit is a
 * StepError `<what>: <the script's last output lines>`.
 */
export async function runStepScript(
  sandbox: StepSandbox,
  what: string,
  script: string,
  args: string[],
): Promise<void> {
  const output: string[] = []
  const code = await sandbox.run(['/bin/sh', '-c', script, 'sandbar-step', ...args], {
    user: 'root',
    cwd: '/',
    envs: { PATH: DEFAULT_PATH },
    onOutput: (line) => {
      output.push(line)
      if (output.length > QUOTED_LINES) output.shift()
    },
  })
  if (code !== 0) {
    const detail = output.join('\n').trim()
    throw new StepError(`${what} (exit code ${code})${detail ? `: ${detail}` : ''}`)
  }
}
