import type { Agent } from '../../../../src/agent/index.js'
import { sandbox } from '../../../store/store-fixture.js'
import { buildResult, readyTemplate, type TemplateApp } from './template-app.js'

/** What the snapshot agent was asked, in order. */
export interface SnapshotLog {
  snapshots: { sandboxID: string; snapshotID: string; layerID: string }[]
  removed: string[]
  /** The next snapshot throws this instead. */
  failure?: Error
}

/**
 * The recording agent's snapshot methods: a snapshot reports the source's layers (the
 * template's, `buildResult()`) with the new layer on top, as the agent does.
 */
export function snapshotAgent(log: SnapshotLog): Partial<Agent> {
  return {
    async snapshot(sandboxID, snapshotID, layerID) {
      const { failure } = log
      log.failure = undefined
      if (failure !== undefined) throw failure
      log.snapshots.push({ sandboxID, snapshotID, layerID })
      return { layers: [...buildResult().layers, layerID], frozenMs: 3, imageBytes: 4096 }
    },
    async removeSnapshot(snapshotID) {
      log.removed.push(snapshotID)
    },
  }
}

/** A running sandbox of a ready template `app`, created through the API. */
export async function runningSandbox(
  t: TemplateApp,
  body: Record<string, unknown> = {},
): Promise<{ sandboxID: string; templateID: string; buildID: string }> {
  const { templateID, buildID } = await readyTemplate(
    t,
    'app',
    buildResult({ defaultUser: 'app', defaultWorkdir: '/srv' }),
    { cpuCount: 4, memoryMB: 2048 },
  )
  const created = await t.call('POST', '/v2/sandboxes', { templateID: 'app', ...body })
  if (created.status !== 201) throw new Error(`create: ${await created.text()}`)
  return { sandboxID: (await created.json()).sandboxID, templateID, buildID }
}

/** A sandbox of the team stored as paused, or with a volume: states no create makes here. */
export async function storedSandbox(t: TemplateApp, kind: 'paused' | 'volume'): Promise<string> {
  const stored = sandbox(t.team.id, 0, {
    state: kind === 'paused' ? 'paused' : 'running',
    volumeMounts:
      kind === 'volume' ? [{ volumeID: crypto.randomUUID(), name: 'data', path: '/data' }] : [],
  })
  await t.store.insertSandbox(stored)
  return stored.sandboxID
}
