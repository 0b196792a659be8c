import type { Template } from '../store/index.js'
import { templateErrors } from './template-errors.js'

/** Wire contract §1.1: aliases and namespaces (team slugs). */
const ALIAS_PATTERN = /^[a-z0-9-_]+$/
/** Wire contract §1.1: tags; a tag must also not read as a UUID (a build ID). */
const TAG_PATTERN = /^[a-z0-9-_.]+$/
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/** The tag a reference without one means (§1.1). */
export const DEFAULT_TAG = 'default'
/** §1.3 `TemplateBuildRequestV3.name`. */
export const MAX_NAME_LENGTH = 128

/** `[namespace/]alias[:tag]`, trimmed and lower-cased; `tag` unset for none or `:default`. */
export interface TemplateReference {
  namespace?: string
  alias: string
  tag?: string
}

/**
 * Splits a template reference (§1.1) and checks each part, or throws `invalid(reason)`: the
 * callers word the 400 their route's way (create says "Invalid template reference").
 */
export function parseTemplateReference(
  raw: string,
  invalid: (reason: string) => Error,
): TemplateReference {
  const text = raw.trim().toLowerCase()
  const colon = text.lastIndexOf(':')
  const path = colon === -1 ? text : text.slice(0, colon)
  const tagText = colon === -1 ? undefined : text.slice(colon + 1)
  const slash = path.indexOf('/')
  const namespace = slash === -1 ? undefined : path.slice(0, slash)
  const alias = slash === -1 ? path : path.slice(slash + 1)
  if (namespace !== undefined && !ALIAS_PATTERN.test(namespace))
    throw invalid(`namespace '${namespace}' may contain only a-z, 0-9, '-' and '_'`)
  if (!ALIAS_PATTERN.test(alias))
    throw invalid(`name '${alias}' may contain only a-z, 0-9, '-' and '_'`)
  const tag = tagText === undefined ? undefined : checkTag(tagText, invalid)
  return { namespace, alias, tag: tag === DEFAULT_TAG ? undefined : tag }
}

/** One tag, lower-cased and checked (§1.1), or `invalid(reason)`. */
export function checkTag(raw: string, invalid: (reason: string) => Error): string {
  const tag = raw.trim().toLowerCase()
  if (!TAG_PATTERN.test(tag))
    throw invalid(`tag '${tag}' may contain only a-z, 0-9, '-', '_' and '.'`)
  if (UUID_PATTERN.test(tag)) throw invalid(`tag '${tag}' must not be a UUID`)
  return tag
}

/**
 * The tags a new build takes (§1.4 `POST /v3/templates`): the name's tag first, then the
 * listed ones, checked and without repeats; `default` when there are none.
 */
export function buildTags(nameTag: string | undefined, listed: readonly string[]): string[] {
  const tags = [...(nameTag === undefined ? [] : [nameTag]), ...listed].map((tag) =>
    checkTag(tag, templateErrors.invalidTag),
  )
  const unique = [...new Set(tags)]
  return unique.length === 0 ? [DEFAULT_TAG] : unique
}

/**
 * A template's alias, or none for an unnamed snapshot: the store requires a name, unique among
 * the team's templates, so such a template keeps its own ID there. (Sandbar's own templates
 * are named as their IDs too, `base` say, and keep that alias.)
 */
export function templateAlias(
  template: Pick<Template, 'templateID' | 'name' | 'sourceSandboxID'>,
): string | undefined {
  const unnamed = template.sourceSandboxID !== null && template.name === template.templateID
  return unnamed ? undefined : template.name
}

/** Whether `id` is a build ID (UUID, §1.1). */
export function isBuildID(id: string): boolean {
  return UUID_PATTERN.test(id)
}
