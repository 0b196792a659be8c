import type { Logger } from '../logger.js'
import { hasCompleteCheckpoint } from './checkpoint/sandbox-checkpoint.js'
import { hostNames } from './host-names.js'
import type { ReconcileReport } from './index.js'
import { isMounted } from './rootfs/mount-calls.js'
import { type HostParts, removeSandboxHost, sandboxPaths, stopSandboxHost } from './sandbox-host.js'

/**
 * Makes the host agree with the agent's records (DESIGN.md "Restart is normal"): a sandbox
 * whose record, container, network and root mount all exist is adopted, and so is a hibernated
 * one, whose record and checkpoint are what it has until resumed, and one paused without
 * memory, whose record and disk are; anything else with
 * the agent's prefix — a half-created sandbox, a container or netns without a record — is
 * removed. Every decision is logged.
 */
export async function reconcile(parts: HostParts, logger: Logger): Promise<ReconcileReport> {
  const { prefix } = parts.config
  // Sandboxes keep the runtime they were started on, whatever the agent's default is now.
  const runtimes = await parts.runtimes.withState()
  const lists = await Promise.all(runtimes.map((runtime) => runtime.list()))
  const containers = new Map(lists.flat().map((c) => [c.id, c]))
  const namespaces = new Set(await parts.network.present())
  const report: ReconcileReport = { adopted: [], removed: [] }
  const known = new Set<string>()

  for (const { sandboxID, record } of await parts.records.all()) {
    known.add(sandboxID)
    const container = containers.get(hostNames(prefix, sandboxID).container)
    const alive = container?.status === 'running' || container?.status === 'paused'
    // Its files are all it keeps; whatever a crash during its pause left running goes.
    if (record?.state === 'paused' && record.filesOnly === true) {
      await stopSandboxHost(parts, sandboxID)
      report.adopted.push(sandboxID)
      logger.info({ sandboxID, state: 'filesOnly' }, 'reconcile: adopted sandbox')
      continue
    }
    // Its processes are in its checkpoint, and resume puts back whatever a restart took; one
    // whose dump completed just before a crash is hibernated too.
    if (
      record?.state === 'paused' &&
      (record.hibernated === true || (!alive && (await hasCompleteCheckpoint(parts, sandboxID))))
    ) {
      if (record.hibernated !== true) await parts.records.save({ ...record, hibernated: true })
      report.adopted.push(sandboxID)
      logger.info({ sandboxID, state: 'hibernated' }, 'reconcile: adopted sandbox')
      continue
    }
    const complete =
      record !== undefined &&
      record.state !== 'creating' &&
      alive &&
      namespaces.has(sandboxID) &&
      (await isMounted(sandboxPaths(parts.records, sandboxID).rootfs))
    if (complete && container) {
      const state = container.status === 'paused' ? 'paused' : 'running'
      if (record.state !== state) await parts.records.save({ ...record, state })
      report.adopted.push(sandboxID)
      logger.info({ sandboxID, state }, 'reconcile: adopted sandbox')
    } else {
      await removeSandboxHost(parts, sandboxID)
      report.removed.push(sandboxID)
      logger.warn(
        { sandboxID, hadRecord: record !== undefined, alive },
        record === undefined
          ? 'reconcile: removed a sandbox whose record is missing or unreadable'
          : 'reconcile: removed incomplete sandbox',
      )
    }
  }

  const orphans = new Set<string>()
  for (const id of containers.keys()) {
    if (id.startsWith(`${prefix}-`)) orphans.add(id.slice(prefix.length + 1))
  }
  for (const sandboxID of namespaces) orphans.add(sandboxID)
  for (const sandboxID of orphans) {
    if (known.has(sandboxID)) continue
    await removeSandboxHost(parts, sandboxID)
    report.removed.push(sandboxID)
    logger.warn({ sandboxID }, 'reconcile: removed orphaned host objects')
  }
  return report
}
