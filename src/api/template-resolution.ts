import type { BuildResult, Store, Team, Template, TemplateBuild } from '../store/index.js'
import { apiErrors } from './errors.js'
import { DEFAULT_TAG, parseTemplateReference } from './template-names.js'

/** A template reference resolved to the ready build its tag points at. */
export interface ResolvedTemplate {
  template: Template
  build: TemplateBuild
  result: BuildResult
}

/**
 * Wire contract §1.4 create: a template ID, `name`, `name:tag` or `team-slug/name:tag`; the
 * team's own templates first, then any public template by ID (as `base` is reached from every
 * team); in another team's namespace, its template when public (else 403); the tag `default`
 * when none is named. Errors carry the contract's texts.
 */
export async function resolveTemplateReference(
  store: Store,
  team: Team,
  reference: string,
): Promise<ResolvedTemplate> {
  const ref = parseTemplateReference(reference, apiErrors.invalidTemplateReference)
  const shown = ref.namespace === undefined ? ref.alias : `${ref.namespace}/${ref.alias}`
  let template: Template | undefined
  const owner =
    ref.namespace === undefined || ref.namespace === team.slug
      ? team
      : await store.findTeamBySlug(ref.namespace)
  if (owner !== undefined) template = await store.findTemplate(owner.id, ref.alias)
  if (template === undefined && ref.namespace === undefined) {
    const byID = await store.getTemplate(ref.alias)
    if (byID !== undefined && byID.deletedAt === null) template = byID
  }
  if (template === undefined) throw apiErrors.templateNotFound(shown)
  if (template.teamID !== team.id && !template.public) throw apiErrors.templateForbidden(shown)
  const tag = ref.tag ?? DEFAULT_TAG
  const pointer = await store.getTag(template.templateID, tag)
  const build = pointer === undefined ? undefined : await store.getBuild(pointer.buildID)
  if (build?.status !== 'ready' || build.result === null) throw apiErrors.tagNotFound(tag, shown)
  return { template, build, result: build.result }
}
