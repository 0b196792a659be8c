import type { Builder } from '../builder/index.js'
import type { Logger } from '../logger.js'
import type { Store, Team, Template, TemplateTag } from '../store/index.js'
import { ApiError } from './errors.js'
import { ensureSystemTemplate, type SystemTemplate } from './system-templates.js'
import { ownTemplate, withBuilds } from './template-access.js'
import { BUILD_FAILURES, TemplateBuilds, type TemplateBuildsConfig } from './template-builds.js'
import { templateErrors } from './template-errors.js'
import { checkTag, DEFAULT_TAG, parseTemplateReference } from './template-names.js'
import { type ResolvedTemplate, resolveTemplateReference } from './template-resolution.js'
import type { TemplateWithBuildList } from './template-views.js'

export interface TemplateServiceConfig extends TemplateBuildsConfig {
  /** Removes the agent's snapshot of a deleted snapshot build (Agent.removeSnapshot). */
  removeSnapshot?: (snapshotID: string) => Promise<void>
}

/** Templates and their tags over the store; builds in `builds` (wire contract §1.4). */
export class TemplateService {
  readonly builds: TemplateBuilds

  constructor(
    private readonly store: Store,
    private readonly builder: Builder,
    private readonly logger: Logger,
    private readonly config: TemplateServiceConfig = {},
  ) {
    this.builds = new TemplateBuilds(store, builder, logger, config)
  }

  /**
   * `GET /templates` and `GET /v2/templates`: the team's live templates, newest first; its
   * snapshots are listed by `GET /snapshots` instead, as infra lists them.
   */
  async list(team: Team): Promise<TemplateWithBuildList[]> {
    const templates = (await this.store.listTemplates(team.id)).filter(
      (template) => template.sourceSandboxID === null,
    )
    return Promise.all(templates.map((template) => withBuilds(this.store, template, team.slug)))
  }

  /** `GET /templates/{t}`: the team's template with its builds, newest first. */
  async get(team: Team, templateID: string): Promise<TemplateWithBuildList> {
    return withBuilds(this.store, await ownTemplate(this.store, team, templateID), team.slug)
  }

  /**
   * `DELETE /templates/{t}` (§1.4): refused while running or paused sandboxes use it; otherwise
   * soft-deleted (its name is free again), its unfinished builds cancelled, its uploads and
   * snapshots removed. `t` may carry a tag, which is ignored: the SDK deletes a snapshot by its
   * ID, `<templateID>:<tag>` or `<team slug>/<alias>:<tag>`, and infra deletes the template.
   */
  async delete(team: Team, templateID: string): Promise<void> {
    const ref = parseTemplateReference(templateID, templateErrors.invalidTemplateID)
    const template = await ownTemplate(this.store, team, qualified(ref))
    const users = (await this.store.allSandboxes()).filter(
      (sandbox) => sandbox.templateID === template.templateID,
    )
    for (const state of ['running', 'paused'] as const) {
      if (users.some((sandbox) => sandbox.state === state))
        throw templateErrors.templateInUse(template.templateID, state)
    }
    const now = new Date()
    await this.store.updateTemplate(template.templateID, { deletedAt: now, updatedAt: now })
    await this.builds.cancelUnfinished(template.templateID, BUILD_FAILURES.templateDeleted)
    await this.builder.files.removeTemplate(template.templateID)
    await this.removeSnapshots(template.templateID)
    this.logger.info({ templateID: template.templateID }, 'template deleted')
    this.config.releaseLayers?.()
  }

  /**
   * The agent's snapshots of a deleted template's snapshot builds (each has its build's ID),
   * which no create reaches any more. One that fails is logged: the template is deleted.
   */
  private async removeSnapshots(templateID: string): Promise<void> {
    const { removeSnapshot } = this.config
    if (removeSnapshot === undefined) return
    for (const build of await this.store.listBuilds(templateID)) {
      if (build.result?.snapshot === undefined) continue
      await removeSnapshot(build.buildID).catch((error: unknown) => {
        this.logger.warn(
          { err: error, templateID, buildID: build.buildID },
          'removing a deleted snapshot failed',
        )
      })
    }
  }

  /** `PATCH /templates/{t}` and its v2 (§1.4): only `public` changes. */
  async update(team: Team, templateID: string, patch: { public?: boolean }) {
    const template = await ownTemplate(this.store, team, templateID)
    const updated =
      patch.public === undefined
        ? template
        : await this.store.updateTemplate(template.templateID, {
            public: patch.public,
            updatedAt: new Date(),
          })
    return withBuilds(this.store, updated ?? template, team.slug)
  }

  /** `POST /templates/tags` (§1.4): points the tags at the build `target` (`name:tag`) names. */
  async assignTags(team: Team, target: string, tags: string[]) {
    if (tags.length === 0) throw templateErrors.tagsRequired()
    const checked = [...new Set(tags.map((tag) => checkTag(tag, templateErrors.invalidTag)))]
    const ref = parseTemplateReference(target, templateErrors.invalidTemplateName)
    const template = await ownTemplate(this.store, team, qualified(ref))
    const sourceTag = ref.tag ?? DEFAULT_TAG
    const pointer = await this.store.getTag(template.templateID, sourceTag)
    if (pointer === undefined) throw templateErrors.tagTargetNotFound(qualified(ref), sourceTag)
    await this.store.assignTags(template.templateID, checked, pointer.buildID)
    this.config.releaseLayers?.()
    return { tags: checked, buildID: pointer.buildID }
  }

  /** `DELETE /templates/tags` (§1.4): `default` stays; `name` carries no tag. */
  async removeTags(team: Team, name: string, tags: string[]): Promise<void> {
    if (tags.length === 0) throw templateErrors.tagsRequired()
    const ref = parseTemplateReference(name, templateErrors.invalidTemplateName)
    if (name.includes(':')) throw templateErrors.nameHasTag(name)
    const checked = tags.map((tag) => checkTag(tag, templateErrors.invalidTag))
    if (checked.includes(DEFAULT_TAG)) throw templateErrors.defaultTagUndeletable()
    const template = await ownTemplate(this.store, team, qualified(ref))
    await this.store.removeTags(template.templateID, checked)
    this.config.releaseLayers?.()
  }

  /** `GET /templates/{t}/tags`. */
  async listTags(team: Team, templateID: string): Promise<TemplateTag[]> {
    const template = await ownTemplate(this.store, team, templateID)
    return this.store.listTags(template.templateID)
  }

  /**
   * `GET /templates/aliases/{alias}` (§1.4, the SDK's `Template.exists`): the team's own
   * template of that name or ID; 403 for another team's; 404 when there is none.
   */
  async alias(team: Team, alias: string): Promise<Template> {
    const ref = parseTemplateReference(alias, templateErrors.invalidTemplateName)
    try {
      return await ownTemplate(this.store, team, qualified(ref))
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
   * `sandbar serve` at start: one of Sandbar's own templates exists and is ready
   * (system-templates.ts). Start-up is also when layers of templates deleted while the service
   * was down can go.
   */
  async ensureSystemTemplate(definition: SystemTemplate): Promise<void> {
    await ensureSystemTemplate(this.store, this.builds, definition)
    this.config.releaseLayers?.()
  }
}

/** `name` or `namespace/name` of a parsed reference, without its tag. */
function qualified(ref: { namespace?: string; alias: string }): string {
  return ref.namespace === undefined ? ref.alias : `${ref.namespace}/${ref.alias}`
}
