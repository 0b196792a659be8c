import { randomUUID } from 'node:crypto'
import type { BuildBase, Builder, BuildRequest, BuildStep } from '../builder/index.js'
import type { Logger } from '../logger.js'
import type {
  BuildLogEntry,
  LogLevel,
  Store,
  Team,
  Template,
  TemplateBuild,
} from '../store/index.js'
import { type BuildOutcome, StoreBuildReporter } from './build-reporter.js'
import { ApiError } from './errors.js'
import { newTemplate } from './new-template.js'
import type { BuildStart } from './schemas/template-requests.js'
import { ownTemplate, teamBuild, withBuilds } from './template-access.js'
import { templateErrors } from './template-errors.js'
import { buildTags, isBuildID, parseTemplateReference } from './template-names.js'
import { resolveTemplateReference } from './template-resolution.js'
import {
  checkTemplateSizes,
  DEFAULT_SIZE_LIMITS,
  type TemplateSizeLimits,
  type TemplateSizes,
} from './template-sizes.js'
import { templateVersion } from './template-version.js'
import type { TemplateWithBuildList } from './template-views.js'

/** §1.4 build failures, word for word, and Sandbar's own for a deleted template. */
export const BUILD_FAILURES = {
  superseded: 'The build was canceled because it was superseded by a newer one.',
  bothBases: 'cannot specify both fromImage and fromTemplate',
  noBase: 'must specify either fromImage or fromTemplate',
  templateDeleted: 'The build was canceled because its template was deleted.',
  interrupted:
    'The build was interrupted: sandbar serve stopped while it was waiting or running. Start it again.',
} as const

/** Log entries read at once where a route filters them itself (status reasons, cursors). */
const LOG_SCAN_LIMIT = 100_000
const UNFINISHED: TemplateBuild['status'][] = ['waiting', 'building']

export interface TemplateBuildsConfig extends Partial<TemplateSizeLimits> {
  /** A team's builds queued or running before registering another answers 429 (§1.4). */
  buildConcurrency?: number
  /** Called when layers may have lost their last user (layer-collection.ts). */
  releaseLayers?: () => void
}

/** The steps, commands and tags of one of Sandbar's own builds (`run`). */
export interface SystemBuildRecipe {
  tags: string[]
  steps: BuildStep[]
  startCmd?: string | undefined
  readyCmd?: string | undefined
}

/** What `POST /v3/templates` and `/v2/templates` ask for, before validation. */
export interface TemplateRegistration {
  name?: string
  tags?: string[]
  cpuCount?: number
  memoryMB?: number
}

/** Registering, starting, following and cancelling template builds (wire contract §2.1). */
export class TemplateBuilds {
  private readonly limits: TemplateSizeLimits
  private readonly buildConcurrency: number
  private readonly releaseLayers: (() => void) | undefined
  /** Builds handed to the builder by this process: a second start of one is refused. */
  private readonly submitted = new Set<string>()

  constructor(
    private readonly store: Store,
    private readonly builder: Builder,
    private readonly logger: Logger,
    config: TemplateBuildsConfig = {},
  ) {
    this.limits = { ...DEFAULT_SIZE_LIMITS, ...config }
    this.buildConcurrency = config.buildConcurrency ?? 20
    this.releaseLayers = config.releaseLayers
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
    const template = await this.templateForBuild(team, ref.alias)
    await this.supersede(template.templateID, tags)
    const build = newBuild(template.templateID, sizes, tags)
    await this.store.insertBuild(build)
    this.logger.info(
      { templateID: template.templateID, buildID: build.buildID, tags },
      'template build registered',
    )
    return { entry: await withBuilds(this.store, template, team.slug), build }
  }

  /**
   * `POST /v2/templates/{t}/builds/{b}` (§1.4): resolves the base and hands the build to the
   * builder. A build whose base is given wrong fails (the SDK's BuildError) rather than the call.
   */
  async start(
    team: Team,
    templateID: string,
    buildID: string,
    start: BuildStart,
    userAgent: string | undefined,
  ): Promise<void> {
    if (!isBuildID(buildID)) throw templateErrors.buildNotFound(buildID, 'badRequest')
    const template = await ownTemplate(this.store, team, templateID)
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

  /**
   * Registers a build of an existing template and runs it, for Sandbar's own templates
   * (system-templates.ts); resolves with how it ended.
   */
  async run(
    teamID: string,
    templateID: string,
    sizes: TemplateSizes,
    base: BuildBase,
    recipe: SystemBuildRecipe,
  ): Promise<BuildOutcome> {
    const build = newBuild(templateID, sizes, recipe.tags)
    await this.store.insertBuild(build)
    const reporter = new StoreBuildReporter(this.store, build, this.logger)
    const { buildID } = build
    this.submit(
      {
        teamID,
        templateID,
        buildID,
        base,
        force: false,
        steps: recipe.steps,
        startCmd: recipe.startCmd,
        readyCmd: recipe.readyCmd,
        ...sizes,
        version: 'v2.1.0',
      },
      reporter,
    )
    return reporter.outcome
  }

  /** `GET .../status` (§1.4): a page of log entries, and why the build failed. */
  async status(
    team: Team,
    templateID: string,
    buildID: string,
    query: { offset: number; limit: number; level?: LogLevel },
  ) {
    const build = await teamBuild(this.store, team, templateID, buildID)
    const logEntries = query.limit === 0 ? [] : await this.store.listBuildLogs(buildID, query)
    const failure = build.failure
    if (failure === null) return { build, logEntries }
    // §1.4: with a failing step, its warnings and errors explain the failure.
    const stepEntries =
      failure.step === undefined
        ? []
        : (await this.allLogs(buildID, 'warn')).filter((entry) => entry.step === failure.step)
    return { build, logEntries, reason: { ...failure, logEntries: stepEntries } }
  }

  /** `GET .../logs` (§1.2): by time from `cursor`, forward (oldest first) or backward. */
  async logs(
    team: Team,
    templateID: string,
    buildID: string,
    query: { cursor?: Date; direction?: 'forward' | 'backward'; level?: LogLevel; limit: number },
  ): Promise<BuildLogEntry[]> {
    await teamBuild(this.store, team, templateID, buildID)
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

  /**
   * At start, before any build is submitted: builds a previous process left waiting or running
   * will never finish, so they fail and the SDK polling them stops (issue 11: the template's
   * previous ready build keeps serving).
   */
  async failInterrupted(): Promise<number> {
    const now = new Date()
    const failure = { message: BUILD_FAILURES.interrupted }
    const interrupted = await this.store.unfinishedBuilds()
    for (const build of interrupted) {
      await this.store.updateBuild(
        build.buildID,
        { status: 'error', failure, updatedAt: now, finishedAt: now },
        UNFINISHED,
      )
      this.logger.warn(
        { templateID: build.templateID, buildID: build.buildID },
        'build interrupted by a restart',
      )
    }
    return interrupted.length
  }

  /** Fails the template's waiting and running builds (its deletion): the builder stops them. */
  async cancelUnfinished(templateID: string, reason: string): Promise<void> {
    for (const build of await this.store.listBuilds(templateID)) {
      if (UNFINISHED.includes(build.status)) await this.cancel(build.buildID, reason)
    }
  }

  private submit(request: BuildRequest, reporter: StoreBuildReporter): void {
    this.submitted.add(request.buildID)
    void reporter.outcome.then((outcome) => {
      this.submitted.delete(request.buildID)
      // A ready build may take tags from older builds. A failed one's layers stay until then:
      // they are the cache its fixed rerun starts from.
      if (outcome.status === 'ready') this.releaseLayers?.()
    })
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

  /**
   * The team's live template a new build goes to, by name or ID (404 for a deleted one), or a
   * new template of that name. Two registrations racing for a new name share the winner's.
   */
  private async templateForBuild(team: Team, alias: string): Promise<Template> {
    const byName = await this.store.findTemplate(team.id, alias)
    if (byName !== undefined) return byName
    const byID = await this.store.getTemplate(alias)
    if (byID !== undefined && byID.teamID === team.id) {
      if (byID.deletedAt !== null) throw templateErrors.templateDeleted(byID.templateID)
      return byID
    }
    const template = newTemplate(team.id, alias)
    try {
      await this.store.insertTemplate(template)
      return template
    } catch (error) {
      const winner = await this.store.findTemplate(team.id, alias)
      if (winner === undefined) throw error
      return winner
    }
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

  private allLogs(buildID: string, level?: LogLevel): Promise<BuildLogEntry[]> {
    return this.store.listBuildLogs(buildID, { offset: 0, limit: LOG_SCAN_LIMIT, level })
  }
}

/** A build as registered: waiting, with its sizes and the tags it takes when ready. */
function newBuild(templateID: string, sizes: TemplateSizes, tags: string[]): TemplateBuild {
  const now = new Date()
  return {
    buildID: randomUUID(),
    templateID,
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
}
