import { randomUUID } from 'node:crypto'
import type { SnapshotReport } from '../agent/index.js'
import type { BuildResult, Sandbox, TemplateBuild, TemplateTag } from '../store/index.js'

/**
 * A snapshot's build as stored before the agent takes it: building, with its source's sizes
 * and envd, taking `tag` once ready. Its ID is the agent's name for the snapshot.
 */
export function snapshotBuild(templateID: string, source: Sandbox, tag: string): TemplateBuild {
  const now = new Date()
  return {
    buildID: randomUUID(),
    templateID,
    status: 'building',
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
    cpuCount: source.cpuCount,
    memoryMB: source.memoryMB,
    diskSizeMB: source.diskSizeMB,
    envdVersion: source.envdVersion,
    tags: [tag],
    result: null,
    failure: null,
  }
}

/**
 * What a snapshot's sandboxes start from: the layers the agent saved, the user and workdir of
 * the build the source started from, and the source's env vars (its create's included: its
 * restored processes have them).
 */
export function snapshotResult(
  report: SnapshotReport,
  sourceResult: BuildResult,
  source: Sandbox,
): BuildResult {
  return {
    layers: report.layers,
    defaultUser: sourceResult.defaultUser,
    defaultWorkdir: sourceResult.defaultWorkdir,
    envVars: source.envVars,
    snapshot: { sourceSandboxID: source.sandboxID },
  }
}

/**
 * A template's ready snapshot builds that nothing starts sandboxes from any more: untagged and
 * not its newest ready build (the rule that frees their layers, store layersInUse). Their
 * process images can go. `builds` newest first, as the store lists them.
 */
export function unusedSnapshotBuilds(
  builds: readonly TemplateBuild[],
  tags: readonly TemplateTag[],
): TemplateBuild[] {
  const tagged = new Set(tags.map((tag) => tag.buildID))
  const newestReady = builds.find((build) => build.status === 'ready')
  return builds.filter(
    (build) =>
      build.status === 'ready' &&
      build.result?.snapshot !== undefined &&
      build !== newestReady &&
      !tagged.has(build.buildID),
  )
}
