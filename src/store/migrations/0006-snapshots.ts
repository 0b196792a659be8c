import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Snapshots (issue 14): a template made by `POST /sandboxes/{id}/snapshots` names the sandbox
 * it was taken from, which is what `GET /snapshots` lists and filters by; a sandbox names the
 * build it started from, whose user, workdir and env a snapshot or fork of it keeps. Rows from
 * before stay null: ordinary templates, and sandboxes whose build is looked up by their tag.
 */
export const snapshotsMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('templates').addColumn('source_sandbox_id', 'text').execute()
    await db.schema.alterTable('sandboxes').addColumn('build_id', 'text').execute()
  },
}
