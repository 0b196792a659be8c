import type { SnapshotEntry } from '../store/index.js'
import { templateAlias } from './template-names.js'

/**
 * Wire contract §1.3 `SnapshotInfo`: a named snapshot is `<team slug>/<alias>:<tag>`, an
 * unnamed one `<templateID>:<tag>`; either is a template reference that create accepts.
 */
export function snapshotInfo({ template, tag }: SnapshotEntry, slug: string) {
  const alias = templateAlias(template)
  const names = alias === undefined ? [] : [`${slug}/${alias}`]
  return { snapshotID: `${names[0] ?? template.templateID}:${tag}`, names }
}
