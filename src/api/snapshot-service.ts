import type { Agent } from '../agent/index.js'
import { elapsedMs } from '../elapsed-ms.js'
import type { Logger } from '../logger.js'
import type {
  Sandbox,
  SnapshotEntry,
  SnapshotQuery,
  Store,
  Team,
  Template,
  TemplateBuild,
} from '../store/index.js'
import { apiErrors } from './errors.js'
import { newTemplate } from './new-template.js'
import { SandboxEvents } from './sandbox-events.js'
import type { SandboxService } from './sandbox-service.js'
import { snapshotBuild, snapshotResult, unusedSnapshotBuilds } from './snapshot-builds.js'
import { refuseUncheckpointable, snapshotOnAgent, sourceBuildResult } from './snapshot-sources.js'
import { templateErrors } from './template-errors.js'
import { DEFAULT_TAG, parseTemplateReference, type TemplateReference } from './template-names.js'

/**
 * Persistent snapshots (issue 14, wire contract §4.3): a running sandbox checkpointed in place
 * into a template of the team with one ready build, which creates start from as from any
 * template, processes running. Deleting one is deleting its template (template-service.ts).
 */
export class SnapshotService {
  private readonly events: SandboxEvents

  constructor(
    private readonly store: Store,
    private readonly agent: Agent,
    private readonly sandboxes: SandboxService,
    private readonly logger: Logger,
  ) {
    this.events = new SandboxEvents(store)
  }

  /**
   * `POST /sandboxes/{id}/snapshots` (§1.2): a new snapshot template, or with a name the
   * team's template of that name gets the snapshot as a new build under the name's tag (as
   * infra does). The sandbox is frozen meanwhile and runs on after.
   */
  async create(team: Team, sandboxID: string, name?: string): Promise<SnapshotEntry> {
    const started = performance.now()
    const target = name === undefined ? undefined : parseSnapshotName(name, team)
    const source = await this.sandboxes.get(team, sandboxID)
    refuseUncheckpointable(source, 'snapshotted')
    const sourceResult = await sourceBuildResult(this.store, source)
    const tag = target?.tag ?? DEFAULT_TAG
    const { template, created } = await this.templateFor(team, source, target?.alias)
    const build = snapshotBuild(template.templateID, source, tag)
    // The build the tag pointed at before, if any.
    let replaced: string | undefined
    // Stored first: a crash while the agent works leaves a build that the next start fails.
    await this.store.insertBuild(build)
    try {
      const report = await snapshotOnAgent(this.agent, sandboxID, build.buildID, (state) =>
        apiErrors.sandboxCannotSnapshot(sandboxID, state),
      )
      const now = new Date()
      const ready = await this.store.updateBuild(
        build.buildID,
        {
          status: 'ready',
          result: snapshotResult(report, sourceResult, source),
          updatedAt: now,
          finishedAt: now,
        },
        ['building'],
      )
      // Its template was deleted meanwhile, which failed the build.
      if (ready === undefined) throw apiErrors.snapshotTemplateDeleted(template.templateID)
      replaced = (await this.store.getTag(template.templateID, tag))?.buildID
      await this.store.assignTags(template.templateID, [tag], build.buildID)
      // The agent logs the freeze and the images; this is the whole request's.
      this.logger.info(
        {
          sandboxID,
          templateID: template.templateID,
          buildID: build.buildID,
          durationMs: elapsedMs(started),
        },
        'snapshot created',
      )
    } catch (error) {
      await this.abandon(build, template, created, error)
      throw error
    }
    // The snapshot is stored: a log write that fails must not turn that into a 500.
    await this.events
      .record(source, 'snapshotted', { templateID: template.templateID, tag })
      .catch((error: unknown) => {
        this.logger.error({ err: error, sandboxID }, 'recording a snapshot failed')
      })
    if (replaced !== undefined) await this.removeIfUnused(template.templateID, replaced)
    return { template, tag }
  }

  /**
   * `GET /snapshots` (§1.2): the team's snapshot templates, newest first; `name` is one of
   * them by name or ID, with a tag only when it names one (infra: `name:default` matches the
   * default tag, `name` any). A name the team has no template of matches nothing.
   */
  async list(team: Team, filters: { sandboxID?: string; name?: string }): Promise<SnapshotEntry[]> {
    const query: SnapshotQuery = { teamID: team.id, sourceSandboxID: filters.sandboxID }
    if (filters.name !== undefined) {
      const ref = parseSnapshotName(filters.name, team)
      const template = await this.teamTemplate(team, ref.alias)
      if (template === undefined) return []
      query.templateID = template.templateID
      query.tag = ref.tag ?? (filters.name.includes(':') ? DEFAULT_TAG : undefined)
    }
    return this.store.listSnapshots(query)
  }

  /** The team's template a name or ID means, live. */
  private async teamTemplate(team: Team, alias: string): Promise<Template | undefined> {
    const template =
      (await this.store.findTemplate(team.id, alias)) ?? (await this.store.getTemplate(alias))
    return template?.teamID === team.id && template.deletedAt === null ? template : undefined
  }

  /**
   * The team's template of that name, or a new snapshot template (unnamed: its name is its
   * ID). Two snapshots racing for a new name share the winner's.
   */
  private async templateFor(
    team: Team,
    source: Sandbox,
    alias: string | undefined,
  ): Promise<{ template: Template; created: boolean }> {
    if (alias !== undefined) {
      const existing = await this.store.findTemplate(team.id, alias)
      if (existing !== undefined) return { template: existing, created: false }
    }
    const template = newTemplate(team.id, alias, source.sandboxID)
    try {
      await this.store.insertTemplate(template)
      return { template, created: true }
    } catch (error) {
      const winner = alias === undefined ? undefined : await this.store.findTemplate(team.id, alias)
      if (winner === undefined) throw error
      return { template: winner, created: false }
    }
  }

  /**
   * After a failed snapshot: the build fails with the reason, whatever the agent left goes,
   * and a template made for it alone is deleted, so its name is free again. What fails here
   * is logged: the snapshot's own error is the answer.
   */
  private async abandon(
    build: TemplateBuild,
    template: Template,
    created: boolean,
    error: unknown,
  ): Promise<void> {
    const now = new Date()
    const message = error instanceof Error ? error.message : String(error)
    try {
      await this.store.updateBuild(
        build.buildID,
        { status: 'error', failure: { message }, updatedAt: now, finishedAt: now },
        ['building'],
      )
      await this.agent.removeSnapshot(build.buildID)
      if (created)
        await this.store.updateTemplate(template.templateID, { deletedAt: now, updatedAt: now })
    } catch (cleanup) {
      this.logger.error(
        { err: cleanup, templateID: template.templateID, buildID: build.buildID },
        'cleaning up after a failed snapshot failed',
      )
    }
  }

  /**
   * Removes the agent's snapshot of the build a new snapshot took the tag from (the same name
   * taken again), once no create reaches it: no other tag and not the newest.
   */
  private async removeIfUnused(templateID: string, buildID: string): Promise<void> {
    const builds = await this.store.listBuilds(templateID)
    const tags = await this.store.listTags(templateID)
    if (!unusedSnapshotBuilds(builds, tags).some((build) => build.buildID === buildID)) return
    await this.agent.removeSnapshot(buildID).catch((error: unknown) => {
      this.logger.warn({ err: error, templateID, buildID }, 'removing a replaced snapshot failed')
    })
  }
}

/** A snapshot name (§1.3 `SandboxSnapshotRequest.name`): `[team slug/]alias[:tag]`. */
function parseSnapshotName(name: string, team: Team): TemplateReference {
  const ref = parseTemplateReference(name, apiErrors.invalidName)
  if (ref.namespace !== undefined && ref.namespace !== team.slug)
    throw templateErrors.namespaceMismatch(ref.namespace, team.slug)
  return ref
}
