import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * What the control plane collects from running sandboxes (schema.ts): a metrics series per
 * sandbox, and how far each sandbox's own output (envd's log) has been read into its logs.
 */
export const telemetryMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('sandbox_metrics')
      .addColumn('team_id', 'text', (col) => col.notNull())
      .addColumn('sandbox_id', 'text', (col) => col.notNull())
      .addColumn('ts', 'bigint', (col) => col.notNull())
      .addColumn('cpu_count', 'integer', (col) => col.notNull())
      .addColumn('cpu_used_pct', 'double precision', (col) => col.notNull())
      .addColumn('mem_used', 'bigint', (col) => col.notNull())
      .addColumn('mem_total', 'bigint', (col) => col.notNull())
      .addColumn('mem_cache', 'bigint', (col) => col.notNull())
      .addColumn('disk_used', 'bigint', (col) => col.notNull())
      .addColumn('disk_total', 'bigint', (col) => col.notNull())
      .execute()
    await db.schema
      .createIndex('sandbox_metrics_sandbox_ts')
      .on('sandbox_metrics')
      .columns(['team_id', 'sandbox_id', 'ts'])
      .execute()
    // Retention deletes by age alone, across sandboxes.
    await db.schema.createIndex('sandbox_metrics_ts').on('sandbox_metrics').column('ts').execute()
    await db.schema.createIndex('sandbox_logs_ts').on('sandbox_logs').column('ts').execute()
    await db.schema
      .createTable('sandbox_output_cursors')
      .addColumn('sandbox_id', 'text', (col) => col.primaryKey())
      .addColumn('bytes_read', 'bigint', (col) => col.notNull())
      .execute()
  },
}
