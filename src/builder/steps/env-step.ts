import { DEFAULT_PATH } from '../../envd/index.js'
import type { BuildContext } from './build-context.js'
import { expandShellValue, type VariableLookup } from './shell-expansion.js'
import { StepError } from './step-error.js'

/**
 * Variables as a process of the context user sees them: the context env, and where it has none,
 * what envd gives every process — PATH, and HOME/USER/LOGNAME of a user made by
 * `useradd --create-home` — so `PATH=/opt/bin:$PATH` keeps the system's PATH.
 */
export function contextLookup(context: BuildContext): VariableLookup {
  const home = context.user === 'root' ? '/root' : `/home/${context.user}`
  const fallback: Record<string, string> = {
    PATH: DEFAULT_PATH,
    HOME: home,
    USER: context.user,
    LOGNAME: context.user,
  }
  return (name) => (Object.hasOwn(context.env, name) ? context.env[name] : fallback[name])
}

/**
 * ENV/ARG `[k1, v1, k2, v2, …]` (§2.2): values shell-expanded against the env before the step
 * (as Docker's `ENV a=1 b=$a` sees the old `a`), then merged into the context env.
 */
export function applyEnv(type: string, args: string[], context: BuildContext): BuildContext {
  if (args.length === 0) throw new StepError(`${type} does not support passing no arguments`)
  if (args.length % 2 !== 0) throw new StepError(`${type} requires both a key and value arguments`)
  const lookup = contextLookup(context)
  const env = { ...context.env }
  for (let i = 0; i < args.length; i += 2) {
    const key = args[i] ?? ''
    if (!/^[^=\0]+$/.test(key)) throw new StepError(`${type} key '${key}' is not a variable name`)
    env[key] = expandShellValue(args[i + 1] ?? '', lookup)
  }
  return { ...context, env }
}
