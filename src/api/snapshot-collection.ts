import type { Agent } from '../agent/index.js'
import type { Logger } from '../logger.js'
import type { Store } from '../store/index.js'

/**
 * Removes the agent's snapshots no live snapshot build names: a fork's, which its request
 * removes once its sandboxes started, and a failed snapshot's, when the service stopped before
 * it could (sandbox-forks.ts, snapshot-service.ts). Run at start, before any request.
 */
export async function removeStraySnapshots(
  store: Store,
  agent: Agent,
  logger: Logger,
): Promise<void> {
  const live = await store.liveSnapshotBuildIDs()
  const stray = (await agent.snapshots()).filter((snapshotID) => !live.has(snapshotID))
  for (const snapshotID of stray) await agent.removeSnapshot(snapshotID)
  if (stray.length > 0) logger.info({ snapshots: stray }, 'stray snapshots removed')
}
