import {
  type Agent,
  SandboxNotFoundError,
  SandboxStateError,
  type SnapshotReport,
} from '../agent/index.js'
import { layerID, SNAPSHOT_LAYER_KIND } from '../builder/index.js'
import type { BuildResult, Sandbox, Store } from '../store/index.js'
import { type ApiError, apiErrors } from './errors.js'
import { DEFAULT_TAG } from './template-names.js'

/** How a refusal names what was asked of the sandbox. */
export type CheckpointOperation = 'snapshotted' | 'forked'

/**
 * A sandbox a snapshot or fork may be taken of: running, and without volumes (CRIU cannot
 * checkpoint their binds; the agent would fail after freezing it).
 */
export function refuseUncheckpointable(sandbox: Sandbox, operation: CheckpointOperation): void {
  const { sandboxID, state } = sandbox
  if (state !== 'running') {
    throw operation === 'forked'
      ? apiErrors.sandboxForkPaused(sandboxID)
      : apiErrors.sandboxCannotSnapshot(sandboxID, state)
  }
  if (sandbox.volumeMounts.length > 0) throw apiErrors.sandboxMountsVolumes(sandboxID, operation)
}

/**
 * The ready build a sandbox started from: its user and workdir are a snapshot's or fork's.
 * A sandbox stored before builds were recorded started from its template's default tag.
 */
export async function sourceBuildResult(store: Store, sandbox: Sandbox): Promise<BuildResult> {
  let buildID = sandbox.buildID
  if (buildID === null)
    buildID = (await store.getTag(sandbox.templateID, DEFAULT_TAG))?.buildID ?? null
  const build = buildID === null ? undefined : await store.getBuild(buildID)
  if (build?.result == null)
    throw new Error(`the build sandbox ${sandbox.sandboxID} started from is not in the store`)
  return build.result
}

/**
 * Snapshots the running sandbox on the agent as `snapshotID`, its files in a new layer; the
 * agent's refusals become the API's (a sandbox paused or killed meanwhile).
 */
export async function snapshotOnAgent(
  agent: Agent,
  sandboxID: string,
  snapshotID: string,
  refusal: (state: string) => ApiError,
): Promise<SnapshotReport> {
  try {
    return await agent.snapshot(sandboxID, snapshotID, layerID(SNAPSHOT_LAYER_KIND, '', true))
  } catch (error) {
    if (error instanceof SandboxStateError) throw refusal(error.state)
    if (error instanceof SandboxNotFoundError) throw apiErrors.sandboxNotFound(sandboxID)
    throw error
  }
}
