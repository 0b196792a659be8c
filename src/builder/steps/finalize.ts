import type { StepSandbox } from './build-context.js'
import { runStepScript } from './run-script.js'
import { FINALIZE_SCRIPT } from './step-scripts.js'
import { sudoersFile } from './user-step.js'

/**
 * The finalize phase's configuration (§2.4): user `user`, its sudo and home, /usr/local and
 * /code. It holds nothing of the build, so its layer is cacheable; the per-build `/.e2b` is
 * `e2bMetadata`'s, written on its own.
 */
export async function finalizeTemplate(sandbox: StepSandbox): Promise<void> {
  await runStepScript(sandbox, 'finalize failed', FINALIZE_SCRIPT, [sudoersFile('user')])
}

/** Where §2.4 puts the build's identity inside the template. */
export const E2B_METADATA_PATH = '/.e2b'

/**
 * `/.e2b`'s content (§2.4: `ENV_ID`, `TEMPLATE_ID`, `BUILD_ID`), one `KEY=value` line each. It
 * differs for every build, so it belongs in a small layer of its own above the cached ones
 * (written straight into the layer store, no sandbox needed), not in finalize's.
 */
export function e2bMetadata(ids: { templateID: string; buildID: string }): string {
  return `ENV_ID=${ids.templateID}\nTEMPLATE_ID=${ids.templateID}\nBUILD_ID=${ids.buildID}\n`
}
