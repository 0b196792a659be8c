import type { Store, Team, Template, TemplateBuild } from '../store/index.js'
import { templateErrors } from './template-errors.js'
import { isBuildID } from './template-names.js'
import type { TemplateWithBuildList } from './template-views.js'

/**
 * The team's live template a route names by ID, `name` or `<team slug>/name`; 403 for another
 * team's, 404 when there is none.
 */
export async function ownTemplate(store: Store, team: Team, idOrName: string): Promise<Template> {
  const key = idOrName.trim().toLowerCase()
  const byID = await store.getTemplate(key)
  if (byID !== undefined && byID.deletedAt === null) {
    if (byID.teamID !== team.id) throw templateErrors.templateNoAccess()
    return byID
  }
  const prefix = `${team.slug}/`
  const name = key.startsWith(prefix) ? key.slice(prefix.length) : key
  const byName = name.includes('/') ? undefined : await store.findTemplate(team.id, name)
  if (byName === undefined) throw templateErrors.templateMissing(idOrName)
  return byName
}

/** A build of the team's template named in the path; infra answers an unknown one 400 (§1.2). */
export async function teamBuild(
  store: Store,
  team: Team,
  templateID: string,
  buildID: string,
): Promise<TemplateBuild> {
  const build = isBuildID(buildID) ? await store.getBuild(buildID) : undefined
  const template = build && (await store.getTemplate(build.templateID))
  if (build === undefined || template === undefined)
    throw templateErrors.buildNotFound(buildID, 'badRequest')
  if (template.templateID !== templateID && template.name !== templateID.toLowerCase())
    throw templateErrors.buildNotFound(buildID, 'badRequest')
  if (template.teamID !== team.id) throw templateErrors.templateNoAccess()
  return build
}

/** The template with its builds, newest first, for the views. */
export async function withBuilds(
  store: Store,
  template: Template,
  slug: string,
): Promise<TemplateWithBuildList> {
  return { template, slug, builds: await store.listBuilds(template.templateID) }
}
