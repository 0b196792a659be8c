import { randomUUID } from 'node:crypto'
import type { BuildBase, Builder, BuildRequest } from '../builder/index.js'
import type { Logger } from '../logger.js'
import type {
  BuildLogEntry,
  LogLevel,
  Store,
  Team,
  Template,
  TemplateBuild,
  TemplateTag,
} from '../store/index.js'
import { StoreBuildReporter } from './build-reporter.js'
import { ApiError } from './errors.js'
import { newTemplateID } from './sandbox-ids.js'
import type { BuildStart } from './schemas/template-requests.js'
import { templateErrors } from './template-errors.js'
import {
  buildTags,
  checkTag,
  DEFAULT_TAG,
  isBuildID,
  parseTemplateReference,
} from './template-names.js'
import { type ResolvedTemplate, resolveTemplateReference } from './template-resolution.js'
import {
  checkTemplateSizes,
  DEFAULT_SIZE_LIMITS,
  type TemplateSizeLimits,
} from './template-sizes.js'
import { templateVersion } from './template-version.js'
import type { TemplateWithBuildList } from './template-views.js'

/** The base template every team can start (§1.5 default), with E2B's base sizes. */
export const BASE_TEMPLATE = { templateID: 'base', cpuCount: 2, memoryMB: 512, diskSizeMB: 512 }
/** The image the base template is built from: the SDK's `fromBaseImage()` (issue 11). */
const BASE_IMAGE = 'e2bdev/base'

/** §1.4 build failures, word for word. */
export const BUILD_FAILURES = {
  superseded: 'The build was canceled because it was superseded by a newer one.',
  bothBases: 'cannot specify both fromImage and fromTemplate',
  noBase: 'must specify either fromImage or fromTemplate',
  templateDeleted: 'The build was canceled because its template was deleted.',
} as const

/** Log entries read at once where a route filters them itself (status reasons, cursors). */
const LOG_SCAN_LIMIT = 100_000
const UNFINISHED: TemplateBuild['status'][] = ['waiting', 'building']

export interface TemplateServiceConfig extends Partial<TemplateSizeLimits> {
  /** A team's builds queued or running before registering another answers 429 (§1.4). */
  buildConcurrency?: number
}

/** What `POST /v3/templates` and `/v2/templates` ask for, before validation. */
export interface TemplateRegistration {
  name?: string
  tags?: string[]
  cpuCount?: number
  memoryMB?: number
}

/** Templates, their builds and tags over the store and the builder (wire contract §1.4). */
export class TemplateService {
  private readonly limits: TemplateSizeLimits
  private readonly buildConcurrency: number
  /** Builds handed to the builder by this process: a second start of one is refused. */
  private readonly submitted = new Set<string>()

  constructor(
    private readonly store: Store,
    private readonly builder: Builder,
    private readonly logger: Logger,
    config: TemplateServiceConfig = {},
  ) {
    this.limits = { ...DEFAULT_SIZE_LIMITS, ...config }
    this.buildConcurrency = config.buildConcurrency ?? 20
  }

  /**
   * `POST /v3/templates` (§1.4): a new build of the team's template of that name, or of a new
   * template. Older waiting builds for any of the same tags are failed as superseded.
   */
  async register(
    team: Team,
    request: TemplateRegistration,
  ): Promise<{ entry: TemplateWithBuildList; build: TemplateBuild }> {
    if (request.name === undefined || request.name.trim() === '')
      throw templateErrors.nameRequired()
    const ref = parseTemplateReference(request.name, templateErrors.invalidTemplateName)
    if (ref.namespace !== undefined && ref.namespace !== team.slug)
      throw templateErrors.namespaceMismatch(ref.namespace, team.slug)
    const tags = buildTags(ref.tag, request.tags ?? [])
    const sizes = checkTemplateSizes(request, this.limits)
    if (this.builder.activeBuilds(team.id) >= this.buildConcurrency)
      throw templateErrors.buildLimit(this.buildConcurrency)
    const now = new Date()
    const existing = await this.existingForBuild(team, ref.alias)
    const template = existing ?? {
      templateID: newTemplateID(),
      teamID: team.id,
      name: ref.alias,
      public: false,
      createdAt: now,
      updatedAt: now,
      lastSpawnedAt: null,
      spawnCount: 0,
      deletedAt: null,
    }
    if (existing === undefined) await this.store.insertTemplate(template)
    else await this.supersede(template.templateID, tags)
    const build: TemplateBuild = {
      buildID: randomUUID(),
      templateID: template.templateID,
      status: 'waiting',
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
      ...sizes,
      envdVersion: null,
      tags,
      result: null,
      failure: null,
    }
    await this.store.insertBuild(build)
    this.logger.info(
      { templateID: template.templateID, buildID: build.buildID, tags },
      'template build registered',
    )
    return { entry: await this.withBuilds(template, team.slug), build }
  }

  /**
   * `POST /v2/templates/{t}/builds/{b}` (§1.4): resolves the base and hands the build to the
   * builder. A build whose base is given wrong fails (the SDK's BuildError) rather than the call.
   */
  async startBuild(
    team: Team,
    templateID: string,
    buildID: string,
    start: BuildStart,
    userAgent: string | undefined,
  ): Promise<void> {
    if (!isBuildID(buildID)) throw templateErrors.buildNotFound(buildID, 'badRequest')
    const template = await this.ownTemplate(team, templateID)
    const build = await this.store.getBuild(buildID)
    if (build === undefined || build.templateID !== template.templateID)
      throw templateErrors.buildNotFound(buildID, 'notFound')
    if (build.status !== 'waiting' || this.submitted.has(buildID))
      throw templateErrors.buildNotWaiting()
    const reporter = new StoreBuildReporter(this.store, build, this.logger)
    let base: BuildBase
    try {
      base = await this.buildBase(team, start)
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      reporter.log({ level: 'error', message: error.message, step: 'base' })
      await reporter.failed({ message: error.message, step: 'base' })
      return
    }
    this.submit(
      {
        teamID: team.id,
        templateID: template.templateID,
        buildID,
        base,
        force: start.force ?? false,
        steps: (start.steps ?? []).map((step) => ({
          type: step.type,
          args: step.args ?? [],
          filesHash: step.filesHash ?? undefined,
          force: step.force ?? false,
        })),
        startCmd: start.startCmd ?? undefined,
        readyCmd: start.readyCmd ?? undefined,
        cpuCount: build.cpuCount,
        memoryMB: build.memoryMB,
        diskSizeMB: build.diskSizeMB,
        version: templateVersion(userAgent),
      },
      reporter,
    )
  }

  /** `GET .../status` (§1.4): a page of log entries, and why the build failed. */
  async buildStatus(
    team: Team,
    templateID: string,
    buildID: string,
    query: { offset: number; limit: number; level?: LogLevel },
  ) {
    const build = await this.teamBuild(team, templateID, buildID)
    const logEntries = query.limit === 0 ? [] : await this.store.listBuildLogs(buildID, query)
    const reason =
      build.failure === null
        ? undefined
        : {
            message: build.failure.message,
            step: build.failure.step,
            logEntries:
              build.failure.step === undefined
                ? []
                : (await this.allLogs(buildID, 'warn')).filter(
                    (entry) => entry.step === build.failure?.step,
                  ),
          }
    return { build, logEntries, reason }
  }

  /** `GET .../logs` (§1.2): by time from `cursor`, forward (oldest first) or backward. */
  async buildLogs(
    team: Team,
    templateID: string,
    buildID: string,
    query: { cursor?: Date; direction?: 'forward' | 'backward'; level?: LogLevel; limit: number },
  ): Promise<BuildLogEntry[]> {
    await this.teamBuild(team, templateID, buildID)
    const entries = await this.allLogs(buildID, query.level)
    const cursor = query.cursor?.getTime()
    if (query.direction === 'backward')
      return entries
        .filter((entry) => cursor === undefined || entry.timestamp.getTime() <= cursor)
        .reverse()
        .slice(0, query.limit)
    return entries
      .filter((entry) => cursor === undefined || entry.timestamp.getTime() >= cursor)
      .slice(0, query.limit)
  }

  /** `GET /templates` and `GET /v2/templates`: the team's live templates, newest first. */
  async list(team: Team): Promise<TemplateWithBuildList[]> {
    const templates = await this.store.listTemplates(team.id)
    return Promise.all(templates.map((template) => this.withBuilds(template, team.slug)))
  }

  /** `GET /templates/{t}`: the team's template with its builds, newest first. */
  async get(team: Team, templateID: string): Promise<TemplateWithBuildList> {
    return this.withBuilds(await this.ownTemplate(team, templateID), team.slug)
  }

  /**
   * `DELETE /templates/{t}` (§1.4): refused while running or paused sandboxes use it; otherwise
   * soft-deleted (its name is free again), its unfinished builds cancelled, its uploads removed.
   */
  async delete(team: Team, templateID: string): Promise<void> {
    const template = await this.ownTemplate(team, templateID)
    const users = (await this.store.allSandboxes()).filter(
      (sandbox) => sandbox.templateID === template.templateID,
    )
    for (const state of ['running', 'paused'] as const) {
      if (users.some((sandbox) => sandbox.state === state))
        throw templateErrors.templateInUse(template.templateID, state)
    }
    const now = new Date()
    await this.store.updateTemplate(template.templateID, { deletedAt: now, updatedAt: now })
    for (const build of await this.store.listBuilds(template.templateID)) {
      if (UNFINISHED.includes(build.status))
        await this.cancel(build.buildID, BUILD_FAILURES.templateDeleted)
    }
    await this.builder.files.removeTemplate(template.templateID)
    this.logger.info({ templateID: template.templateID }, 'template deleted')
  }

  /** `PATCH /templates/{t}` and its v2 (§1.4): only `public` changes. */
  async update(team: Team, templateID: string, patch: { public?: boolean }) {
    const template = await this.ownTemplate(team, templateID)
    const updated =
      patch.public === undefined
        ? template
        : await this.store.updateTemplate(template.templateID, {
            public: patch.public,
            updatedAt: new Date(),
          })
    return this.withBuilds(updated ?? template, team.slug)
  }

  /** `POST /templates/tags` (§1.4): points the tags at the build `target` (`name:tag`) names. */
  async assignTags(team: Team, target: string, tags: string[]) {
    if (tags.length === 0) throw templateErrors.tagsRequired()
    const checked = [...new Set(tags.map((tag) => checkTag(tag, templateErrors.invalidTag)))]
    const ref = parseTemplateReference(target, templateErrors.invalidTemplateName)
    const template = await this.ownTemplate(team, qualified(ref))
    const sourceTag = ref.tag ?? DEFAULT_TAG
    const pointer = await this.store.getTag(template.templateID, sourceTag)
    if (pointer === undefined) throw templateErrors.tagTargetNotFound(qualified(ref), sourceTag)
    await this.store.assignTags(template.templateID, checked, pointer.buildID)
    return { tags: checked, buildID: pointer.buildID }
  }

  /** `DELETE /templates/tags` (§1.4): `default` stays; `name` carries no tag. */
  async removeTags(team: Team, name: string, tags: string[]): Promise<void> {
    if (tags.length === 0) throw templateErrors.tagsRequired()
    const ref = parseTemplateReference(name, templateErrors.invalidTemplateName)
    if (name.includes(':')) throw templateErrors.nameHasTag(name)
    const checked = tags.map((tag) => checkTag(tag, templateErrors.invalidTag))
    if (checked.includes(DEFAULT_TAG)) throw templateErrors.defaultTagUndeletable()
    const template = await this.ownTemplate(team, qualified(ref))
    await this.store.removeTags(template.templateID, checked)
  }

  /** `GET /templates/{t}/tags`. */
  async listTags(team: Team, templateID: string): Promise<TemplateTag[]> {
    const template = await this.ownTemplate(team, templateID)
    return this.store.listTags(template.templateID)
  }

  /**
   * `GET /templates/aliases/{alias}` (§1.4, the SDK's `Template.exists`): the team's own
   * template of that name or ID; 403 for another team's; 404 when there is none.
   */
  async alias(team: Team, alias: string): Promise<Template> {
    const ref = parseTemplateReference(alias, templateErrors.invalidTemplateName)
    try {
      return await this.ownTemplate(team, qualified(ref))
    } catch (error) {
      if (error instanceof ApiError && error.kind === 'notFound')
        throw templateErrors.aliasNotFound(alias)
      throw error
    }
  }

  /** A sandbox's template (§1.4 create), resolved to its tag's ready build. */
  resolveForSandbox(team: Team, reference: string): Promise<ResolvedTemplate> {
    return resolveTemplateReference(this.store, team, reference)
  }

  /** Counts a sandbox started from the template; a failure is logged, the sandbox stays. */
  recordSpawn(templateID: string): void {
    this.store.recordSpawn(templateID, new Date()).catch((error: unknown) => {
      this.logger.warn({ err: error, templateID }, 'recording a template spawn failed')
    })
  }

  /**
   * Makes sure `base` exists and has a ready build (`sandbar serve` at start): the template,
   * public and owned by the first team, is created if missing; without a ready build one is
   * built from `e2bdev/base`. Resolves when `base` can start sandboxes; rejects with the
   * build's failure.
   */
  async ensureBaseTemplate(): Promise<void> {
    const { team } = await this.store.ensureFirstTeam()
    const now = new Date()
    const existing = await this.store.getTemplate(BASE_TEMPLATE.templateID)
    if (existing === undefined) {
      await this.store.insertTemplate({
        templateID: BASE_TEMPLATE.templateID,
        teamID: team.id,
        name: BASE_TEMPLATE.templateID,
        public: true,
        createdAt: now,
        updatedAt: now,
        lastSpawnedAt: null,
        spawnCount: 0,
        deletedAt: null,
      })
    } else if (existing.deletedAt !== null) {
      await this.store.updateTemplate(BASE_TEMPLATE.templateID, { deletedAt: null, updatedAt: now })
    }
    const ready = (await this.store.listBuilds(BASE_TEMPLATE.templateID)).find(
      (build) => build.status === 'ready',
    )
    if (ready !== undefined) {
      const tag = await this.store.getTag(BASE_TEMPLATE.templateID, DEFAULT_TAG)
      if (tag === undefined)
        await this.store.assignTags(BASE_TEMPLATE.templateID, [DEFAULT_TAG], ready.buildID)
      return
    }
    const { templateID, cpuCount, memoryMB, diskSizeMB } = BASE_TEMPLATE
    const build: TemplateBuild = {
      buildID: randomUUID(),
      templateID,
      status: 'waiting',
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
      cpuCount,
      memoryMB,
      diskSizeMB,
      envdVersion: null,
      tags: [DEFAULT_TAG],
      result: null,
      failure: null,
    }
    await this.store.insertBuild(build)
    const reporter = new StoreBuildReporter(this.store, build, this.logger)
    this.submit(
      {
        teamID: team.id,
        templateID,
        buildID: build.buildID,
        base: { kind: 'image', image: BASE_IMAGE },
        force: false,
        steps: [],
        cpuCount,
        memoryMB,
        diskSizeMB,
        version: 'v2.1.0',
      },
      reporter,
    )
    const outcome = await reporter.outcome
    if (outcome.status === 'error')
      throw new Error(`building the base template failed: ${outcome.failure.message}`)
  }

  private submit(request: BuildRequest, reporter: StoreBuildReporter): void {
    this.submitted.add(request.buildID)
    void reporter.outcome.then(() => this.submitted.delete(request.buildID))
    this.builder.submit(request, reporter)
  }

  /** Fails a waiting or running build: the builder stops it, and the store says why. */
  private async cancel(buildID: string, reason: string): Promise<void> {
    this.builder.cancel(buildID, reason)
    const now = new Date()
    await this.store.updateBuild(
      buildID,
      { status: 'error', failure: { message: reason }, updatedAt: now, finishedAt: now },
      UNFINISHED,
    )
  }

  /** §1.4: older builds still waiting for any of `tags` are failed as superseded. */
  private async supersede(templateID: string, tags: string[]): Promise<void> {
    for (const build of await this.store.listBuilds(templateID)) {
      if (build.status === 'waiting' && build.tags.some((tag) => tags.includes(tag)))
        await this.cancel(build.buildID, BUILD_FAILURES.superseded)
    }
  }

  /** The team's live template a new build goes to, by name or ID; 404 for a deleted one. */
  private async existingForBuild(team: Team, alias: string): Promise<Template | undefined> {
    const byName = await this.store.findTemplate(team.id, alias)
    if (byName !== undefined) return byName
    const byID = await this.store.getTemplate(alias)
    if (byID === undefined || byID.teamID !== team.id) return undefined
    if (byID.deletedAt !== null) throw templateErrors.templateDeleted(byID.templateID)
    return byID
  }

  /** Where a build starts (§1.3 TemplateBuildStartV2): exactly one of image and template. */
  private async buildBase(team: Team, start: BuildStart): Promise<BuildBase> {
    const image = start.fromImage ?? undefined
    const from = start.fromTemplate ?? undefined
    if (image !== undefined && from !== undefined)
      throw new ApiError('badRequest', BUILD_FAILURES.bothBases)
    if (from !== undefined) {
      const { result } = await resolveTemplateReference(this.store, team, from)
      return { kind: 'template', name: from, build: result }
    }
    if (image === undefined || image.trim() === '')
      throw new ApiError('badRequest', BUILD_FAILURES.noBase)
    return { kind: 'image', image, registry: start.fromImageRegistry ?? undefined }
  }

  /**
   * The team's live template named by ID, `name` or `<team slug>/name` in a route; 403 for
   * another team's, 404 when there is none.
   */
  private async ownTemplate(team: Team, idOrName: string): Promise<Template> {
    const key = idOrName.trim().toLowerCase()
    const byID = await this.store.getTemplate(key)
    if (byID !== undefined && byID.deletedAt === null) {
      if (byID.teamID !== team.id) throw templateErrors.templateNoAccess()
      return byID
    }
    const prefix = `${team.slug}/`
    const name = key.startsWith(prefix) ? key.slice(prefix.length) : key
    const byName = name.includes('/') ? undefined : await this.store.findTemplate(team.id, name)
    if (byName === undefined) throw templateErrors.templateMissing(idOrName)
    return byName
  }

  /** A build of the team's template; infra answers an unknown one with 400 (§1.2). */
  private async teamBuild(team: Team, templateID: string, buildID: string) {
    const build = isBuildID(buildID) ? await this.store.getBuild(buildID) : undefined
    const template = build && (await this.store.getTemplate(build.templateID))
    if (build === undefined || template === undefined) {
      throw templateErrors.buildNotFound(buildID, 'badRequest')
    }
    if (template.templateID !== templateID && template.name !== templateID.toLowerCase())
      throw templateErrors.buildNotFound(buildID, 'badRequest')
    if (template.teamID !== team.id) throw templateErrors.templateNoAccess()
    return build
  }

  private allLogs(buildID: string, level?: LogLevel): Promise<BuildLogEntry[]> {
    return this.store.listBuildLogs(buildID, { offset: 0, limit: LOG_SCAN_LIMIT, level })
  }

  private async withBuilds(template: Template, slug: string): Promise<TemplateWithBuildList> {
    return { template, slug, builds: await this.store.listBuilds(template.templateID) }
  }
}

/** `name` or `namespace/name` of a parsed reference, without its tag. */
function qualified(ref: { namespace?: string; alias: string }): string {
  return ref.namespace === undefined ? ref.alias : `${ref.namespace}/${ref.alias}`
}
