import { type Kysely, sql } from 'kysely'
import type { Migration } from 'kysely/migration'

/** Volumes (schema.ts, issue 15): a team's named persistent storage. */
export const volumesMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('volumes')
      .addColumn('volume_id', 'text', (col) => col.primaryKey())
      .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id'))
      .addColumn('name', 'text', (col) => col.notNull())
      .addColumn('size_mb', 'integer', (col) => col.notNull())
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('deleted_at', 'bigint')
      .execute()
    // A name belongs to one live volume of the team; a deleted one leaves it free at once,
    // while its data waits for removal. The same index serves lookups by name and the list.
    await db.schema
      .createIndex('volumes_team_live_name')
      .on('volumes')
      .columns(['team_id', 'name'])
      .unique()
      .where(sql.ref('deleted_at'), 'is', null)
      .execute()
  },
}
