import type { Kysely } from 'kysely'
import type { Template } from './index.js'
import type { Database } from './schema.js'
import { templateFromRow, templatePatchToRow, templateToRow } from './template-row.js'

/** Templates: the team's named environments, soft-deleted so their history stays readable. */
export function templateQueries(db: Kysely<Database>) {
  async function getTemplate(templateID: string): Promise<Template | undefined> {
    const row = await db
      .selectFrom('templates')
      .selectAll()
      .where('template_id', '=', templateID)
      .executeTakeFirst()
    return row === undefined ? undefined : templateFromRow(row)
  }

  return {
    async insertTemplate(template: Template): Promise<void> {
      // The partial unique index (migrations/0003-templates.ts) refuses a taken live name.
      await db.insertInto('templates').values(templateToRow(template)).execute()
    },

    getTemplate,

    async findTemplate(teamID: string, name: string): Promise<Template | undefined> {
      const row = await db
        .selectFrom('templates')
        .selectAll()
        .where('team_id', '=', teamID)
        .where('name', '=', name)
        .where('deleted_at', 'is', null)
        .executeTakeFirst()
      return row === undefined ? undefined : templateFromRow(row)
    },

    async listTemplates(teamID: string): Promise<Template[]> {
      const rows = await db
        .selectFrom('templates')
        .selectAll()
        .where('team_id', '=', teamID)
        .where('deleted_at', 'is', null)
        .orderBy('created_at', 'desc')
        .orderBy('template_id', 'desc')
        .execute()
      return rows.map(templateFromRow)
    },

    async updateTemplate(
      templateID: string,
      patch: Partial<Pick<Template, 'public' | 'updatedAt' | 'deletedAt'>>,
    ): Promise<Template | undefined> {
      const columns = templatePatchToRow(patch)
      if (Object.values(columns).every((value) => value === undefined)) {
        return getTemplate(templateID)
      }
      const row = await db
        .updateTable('templates')
        .set(columns)
        .where('template_id', '=', templateID)
        .returningAll()
        .executeTakeFirst()
      return row === undefined ? undefined : templateFromRow(row)
    },

    async recordSpawn(templateID: string, at: Date): Promise<void> {
      // In one statement, so concurrent creates each count.
      await db
        .updateTable('templates')
        .set((eb) => ({ spawn_count: eb('spawn_count', '+', 1), last_spawned_at: at.getTime() }))
        .where('template_id', '=', templateID)
        .execute()
    },
  }
}
