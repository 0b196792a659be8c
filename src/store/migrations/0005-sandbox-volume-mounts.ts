import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * The volumes each sandbox mounts (wave2-contracts §2.4), as JSON text: what its detail and list
 * entries answer, and what keeps a deleted volume's data until no sandbox mounts it.
 */
export const sandboxVolumeMountsMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('sandboxes')
      .addColumn('volume_mounts', 'text', (col) => col.notNull().defaultTo('[]'))
      .execute()
  },
}
