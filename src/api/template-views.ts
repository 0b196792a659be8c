import type { BuildLogEntry, Template, TemplateBuild, TemplateTag } from '../store/index.js'
import { templateAlias } from './template-names.js'

/** A template with its builds, newest first, as the views need it. */
export interface TemplateWithBuildList {
  template: Template
  builds: TemplateBuild[]
  /** The owning team's slug: names are `<slug>/<name>` (§1.1). */
  slug: string
}

/** `aliases` (deprecated) and `names` (§1.3): none for an unnamed snapshot. */
function naming({ template, slug }: TemplateWithBuildList) {
  const alias = templateAlias(template)
  const aliases = alias === undefined ? [] : [alias]
  return { aliases, names: aliases.map((name) => `${slug}/${name}`) }
}

/** The build a template's list entry describes: its newest ready one, else its newest. */
function shownBuild(builds: TemplateBuild[]): TemplateBuild | undefined {
  return builds.find((build) => build.status === 'ready') ?? builds[0]
}

/** §1.3 `TemplateLegacy`. */
export function templateLegacy(entry: TemplateWithBuildList) {
  const { template, builds } = entry
  const build = shownBuild(builds)
  return {
    templateID: template.templateID,
    buildID: build?.buildID ?? '',
    cpuCount: build?.cpuCount ?? 0,
    memoryMB: build?.memoryMB ?? 0,
    diskSizeMB: build?.diskSizeMB ?? 0,
    public: template.public,
    aliases: naming(entry).aliases,
    createdAt: template.createdAt.toISOString(),
    updatedAt: template.updatedAt.toISOString(),
    createdBy: null,
    lastSpawnedAt: template.lastSpawnedAt?.toISOString() ?? null,
    spawnCount: template.spawnCount,
    buildCount: builds.length,
    envdVersion: build?.envdVersion ?? '',
  }
}

/** §1.3 `Template` (list item). */
export function templateListItem(entry: TemplateWithBuildList) {
  const build = shownBuild(entry.builds)
  return {
    ...templateLegacy(entry),
    names: naming(entry).names,
    buildStatus: build?.status ?? 'waiting',
  }
}

/** §1.3 `TemplateWithBuilds`; `builds` is the page asked for. */
export function templateWithBuilds(entry: TemplateWithBuildList, builds: TemplateBuild[]) {
  const { template } = entry
  return {
    templateID: template.templateID,
    public: template.public,
    ...naming(entry),
    createdAt: template.createdAt.toISOString(),
    updatedAt: template.updatedAt.toISOString(),
    lastSpawnedAt: template.lastSpawnedAt?.toISOString() ?? null,
    spawnCount: template.spawnCount,
    builds: builds.map(buildReply),
  }
}

/** §1.3 `TemplateBuild`. */
export function buildReply(build: TemplateBuild) {
  return {
    buildID: build.buildID,
    status: build.status,
    createdAt: build.createdAt.toISOString(),
    updatedAt: build.updatedAt.toISOString(),
    finishedAt: build.finishedAt?.toISOString(),
    cpuCount: build.cpuCount,
    memoryMB: build.memoryMB,
    diskSizeMB: build.diskSizeMB,
    envdVersion: build.envdVersion ?? undefined,
  }
}

/** §1.3 `TemplateRequestResponseV3`. */
export function templateRequestReply(entry: TemplateWithBuildList, build: TemplateBuild) {
  return {
    templateID: entry.template.templateID,
    buildID: build.buildID,
    public: entry.template.public,
    ...naming(entry),
    tags: build.tags,
  }
}

/** §1.3 `BuildLogEntry`. */
export function logEntryReply(entry: BuildLogEntry) {
  return {
    timestamp: entry.timestamp.toISOString(),
    level: entry.level,
    message: entry.message,
    step: entry.step,
  }
}

/** §1.3 `TemplateTag`. */
export function tagReply(tag: TemplateTag) {
  return { tag: tag.tag, buildID: tag.buildID, createdAt: tag.createdAt.toISOString() }
}
