import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'
import { rowKeyColumn } from './row-key.js'

/** SQL flavour a migration is built for; it changes nothing but the log tables' row keys. */
export type StoreDialect = 'sqlite' | 'postgres'

/** Teams, API keys, sandboxes with their metadata pairs, and sandbox logs (schema.ts). */
export function initMigration(dialect: StoreDialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('teams')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('slug', 'text', (col) => col.notNull().unique())
        .addColumn('created_at', 'bigint', (col) => col.notNull())
        .execute()
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id'))
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('key_hash', 'text', (col) => col.notNull().unique())
        .addColumn('mask_prefix', 'text', (col) => col.notNull())
        .addColumn('mask_value_length', 'integer', (col) => col.notNull())
        .addColumn('mask_value_prefix', 'text', (col) => col.notNull())
        .addColumn('mask_value_suffix', 'text', (col) => col.notNull())
        .addColumn('created_at', 'bigint', (col) => col.notNull())
        .addColumn('last_used_at', 'bigint')
        .execute()
      await createSandboxTables(db)
      await createLogTable(db, dialect)
    },
  }
}

async function createSandboxTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sandboxes')
    .addColumn('sandbox_id', 'text', (col) => col.primaryKey())
    .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id'))
    .addColumn('template_id', 'text', (col) => col.notNull())
    .addColumn('alias', 'text')
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('started_at', 'bigint', (col) => col.notNull())
    .addColumn('end_at', 'bigint', (col) => col.notNull())
    .addColumn('max_end_at', 'bigint', (col) => col.notNull())
    .addColumn('cpu_count', 'integer', (col) => col.notNull())
    .addColumn('memory_mb', 'integer', (col) => col.notNull())
    .addColumn('disk_size_mb', 'integer', (col) => col.notNull())
    .addColumn('metadata', 'text', (col) => col.notNull())
    .addColumn('env_vars', 'text', (col) => col.notNull())
    .addColumn('envd_access_token', 'text')
    .addColumn('traffic_access_token', 'text')
    .addColumn('allow_internet_access', 'integer')
    .addColumn('network', 'text', (col) => col.notNull())
    .addColumn('lifecycle', 'text', (col) => col.notNull())
    .addColumn('envd_version', 'text', (col) => col.notNull())
    .execute()
  // The list route's keyset order (wire contract §1.1) and the lifecycle loop's expiry scan.
  await db.schema
    .createIndex('sandboxes_team_started')
    .on('sandboxes')
    .columns(['team_id', 'started_at', 'sandbox_id'])
    .execute()
  await db.schema.createIndex('sandboxes_end_at').on('sandboxes').column('end_at').execute()
  await db.schema
    .createTable('sandbox_metadata')
    .addColumn('sandbox_id', 'text', (col) =>
      col.notNull().references('sandboxes.sandbox_id').onDelete('cascade'),
    )
    .addColumn('key', 'text', (col) => col.notNull())
    .addColumn('value', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('sandbox_metadata_pk', ['sandbox_id', 'key'])
    .execute()
  await db.schema
    .createIndex('sandbox_metadata_pair')
    .on('sandbox_metadata')
    .columns(['key', 'value'])
    .execute()
}

/**
 * Logs outlive their sandbox (E2B serves logs of killed sandboxes by team and sandbox ID), so
 * they carry the team and have no foreign key. The row key orders entries of the same
 * millisecond.
 */
async function createLogTable(db: Kysely<unknown>, dialect: StoreDialect): Promise<void> {
  const rowKey = rowKeyColumn(dialect)
  await db.schema
    .createTable('sandbox_logs')
    .addColumn('id', rowKey.type, rowKey.build)
    .addColumn('team_id', 'text', (col) => col.notNull())
    .addColumn('sandbox_id', 'text', (col) => col.notNull())
    .addColumn('ts', 'bigint', (col) => col.notNull())
    .addColumn('level', 'text', (col) => col.notNull())
    .addColumn('message', 'text', (col) => col.notNull())
    .addColumn('fields', 'text', (col) => col.notNull())
    .execute()
  await db.schema
    .createIndex('sandbox_logs_sandbox_ts')
    .on('sandbox_logs')
    .columns(['team_id', 'sandbox_id', 'ts', 'id'])
    .execute()
}
