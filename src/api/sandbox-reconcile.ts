import { type Agent, type SandboxInfo, SandboxNotFoundError } from '../agent/index.js'
import type { Logger } from '../logger.js'
import type { Sandbox, Store } from '../store/index.js'
import { storedEgressPolicy } from './egress-rules.js'
import { SandboxEvents } from './sandbox-events.js'

/** What the start of the control plane did to make the store and the agent agree. */
export interface SandboxReconcileReport {
  /** Listed and running or paused as the store says. */
  kept: string[]
  /** Rows of a create that never finished, taken back with whatever of them ran. */
  rolledBack: string[]
  /** Rows whose sandbox the host no longer has. */
  lost: string[]
  /** Sandboxes on the host that no row names, killed. */
  unlisted: string[]
  /** Warm pools' sandboxes no client has claimed, left for the pools to adopt. */
  waiting: SandboxInfo[]
}

/**
 * Makes the store and the agent agree at start, both ways (DESIGN.md "Who owns what"), so a
 * crash at any point of a change leaves each sandbox listed and working or fully gone. The
 * store is the truth for what clients see, and every change writes it at one point; the host
 * is brought back to it:
 * - a `starting` row is a create that never answered its client: it is rolled back;
 * - a `killing` row is a kill cut short: it is finished;
 * - a row whose sandbox the agent no longer has (it died, or was half-removed by a kill and
 *   cleaned up by the agent's own reconcile) is removed;
 * - a sandbox running where its row says paused, or the other way round (a crash between the
 *   host's pause or resume and the store's), is paused or resumed to match;
 * - every kept sandbox gets its stored egress rules again (a crash between the host's network
 *   update and the store's);
 * - a sandbox no row names (a crash after a kill removed the row) is killed, unless it is a
 *   warm pool's that no client claimed: those are the pools' to adopt (warm-pools.ts).
 * One agent serves one store, as in `sandbar serve`.
 */
export async function reconcileSandboxes(
  store: Store,
  agent: Agent,
  logger: Logger,
): Promise<SandboxReconcileReport> {
  const report: SandboxReconcileReport = {
    kept: [],
    rolledBack: [],
    lost: [],
    unlisted: [],
    waiting: [],
  }
  const events = new SandboxEvents(store)
  const hosted = new Map((await agent.list()).map((info) => [info.sandboxID, info]))
  for (const sandbox of await store.allSandboxes()) {
    const { sandboxID } = sandbox
    const info = hosted.get(sandboxID)
    hosted.delete(sandboxID)
    const log = logger.child({ sandboxID })
    if (sandbox.state === 'starting') {
      await killIfPresent(agent, sandboxID)
      await store.removeSandbox(sandboxID)
      report.rolledBack.push(sandboxID)
      log.warn('reconcile: rolled back a create that did not finish')
    } else if (sandbox.state === 'killing') {
      await killIfPresent(agent, sandboxID)
      await store.removeSandbox(sandboxID)
      await events.record(sandbox, 'killed')
      report.lost.push(sandboxID)
      log.warn('reconcile: finished a kill that did not finish')
    } else if (info === undefined || !(await restore(agent, sandbox, info, log))) {
      await killIfPresent(agent, sandboxID)
      await store.removeSandbox(sandboxID)
      await events.record(sandbox, 'killed', { reason: 'lost by the host' })
      report.lost.push(sandboxID)
      log.warn('reconcile: removed a sandbox the host no longer runs')
    } else {
      report.kept.push(sandboxID)
    }
  }
  for (const [sandboxID, info] of hosted) {
    if (info.waiting) {
      report.waiting.push(info)
      continue
    }
    await killIfPresent(agent, sandboxID)
    report.unlisted.push(sandboxID)
    logger.warn({ sandboxID }, 'reconcile: killed a sandbox no row names')
  }
  logger.info(
    {
      kept: report.kept.length,
      rolledBack: report.rolledBack.length,
      lost: report.lost.length,
      unlisted: report.unlisted.length,
      waiting: report.waiting.length,
    },
    'reconciled the store with the agent',
  )
  return report
}

/**
 * Brings one sandbox on the host to its row: state, then egress rules. False when the host
 * cannot, and the sandbox is better gone than listed and broken.
 */
async function restore(
  agent: Agent,
  sandbox: Sandbox,
  info: SandboxInfo,
  log: Logger,
): Promise<boolean> {
  const { sandboxID } = sandbox
  try {
    if (sandbox.state === 'paused' && info.state === 'running') await agent.pause(sandboxID)
    if (sandbox.state === 'running' && info.state === 'paused') await agent.resume(sandboxID)
    await agent.updateNetwork(sandboxID, storedEgressPolicy(sandbox))
    if (sandbox.state !== info.state)
      log.warn({ state: sandbox.state }, 'reconcile: restored state')
    return true
  } catch (error) {
    log.error({ err: error }, 'reconcile: could not restore the sandbox')
    return false
  }
}

/** Kills the sandbox on the host; one the agent does not have is already what was wanted. */
export async function killIfPresent(agent: Agent, sandboxID: string): Promise<void> {
  await agent.kill(sandboxID).catch((error: unknown) => {
    if (!(error instanceof SandboxNotFoundError)) throw error
  })
}
