import type { Kysely, Selectable } from 'kysely'
import type { TemplateTag } from './index.js'
import type { Database, TemplateTagTable } from './schema.js'

/** Tags: names pointing at one build of their template (`name:tag`). */
export function tagQueries(db: Kysely<Database>) {
  return {
    async assignTags(templateID: string, tags: string[], buildID: string): Promise<void> {
      // Distinct, since PostgreSQL refuses an upsert that meets the same row twice.
      const distinct = [...new Set(tags)]
      if (distinct.length === 0) return
      const createdAt = Date.now()
      // One statement: every tag moves or none does. The key on (template_id, build_id)
      // refuses a build of another template.
      await db
        .insertInto('template_tags')
        .values(
          distinct.map((tag) => ({
            template_id: templateID,
            tag,
            build_id: buildID,
            created_at: createdAt,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['template_id', 'tag']).doUpdateSet((eb) => ({
            build_id: eb.ref('excluded.build_id'),
            created_at: eb.ref('excluded.created_at'),
          })),
        )
        .execute()
    },

    async removeTags(templateID: string, tags: string[]): Promise<string[]> {
      if (tags.length === 0) return []
      const removed = await db
        .deleteFrom('template_tags')
        .where('template_id', '=', templateID)
        .where('tag', 'in', tags)
        .returning('tag')
        .execute()
      const existed = new Set(removed.map((row) => row.tag))
      return [...new Set(tags)].filter((tag) => existed.has(tag))
    },

    async listTags(templateID: string): Promise<TemplateTag[]> {
      const rows = await db
        .selectFrom('template_tags')
        .selectAll()
        .where('template_id', '=', templateID)
        .orderBy('tag')
        .execute()
      return rows.map(tagFromRow)
    },

    async getTag(templateID: string, tag: string): Promise<TemplateTag | undefined> {
      const row = await db
        .selectFrom('template_tags')
        .selectAll()
        .where('template_id', '=', templateID)
        .where('tag', '=', tag)
        .executeTakeFirst()
      return row === undefined ? undefined : tagFromRow(row)
    },
  }
}

function tagFromRow(row: Selectable<TemplateTagTable>): TemplateTag {
  return {
    templateID: row.template_id,
    tag: row.tag,
    buildID: row.build_id,
    createdAt: new Date(row.created_at),
  }
}
