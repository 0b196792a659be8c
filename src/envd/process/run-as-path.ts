import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** Where scripts/build.mjs puts the run-as helper (run-as.c): beside each bundle that runs envd. */
export const RUN_AS_FILE = 'run-as'

/**
 * envd's run-as helper: in the toolbox mounted at `SANDBAR_TOOLBOX=<dir>` (a sandbox's envd),
 * else beside the bundle envd runs from (dist/envd/bundle.cjs, or dist/sandbar.mjs for
 * `sandbar envd`). Static, so it needs neither the toolbox's loader nor the rootfs's libc.
 */
export function runAsPath(toolbox: string | undefined): string {
  if (toolbox === undefined || toolbox === '') {
    return fileURLToPath(new URL(`./${RUN_AS_FILE}`, import.meta.url))
  }
  // User processes start in their own cwd, where a relative toolbox path means something else.
  if (!path.isAbsolute(toolbox)) {
    throw new Error(`SANDBAR_TOOLBOX must be an absolute path, got '${toolbox}'`)
  }
  return path.join(toolbox, 'envd', RUN_AS_FILE)
}
