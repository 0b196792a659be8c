import type { Kysely } from 'kysely'
import { type Migration, Migrator } from 'kysely/migration'
import { initMigration, type StoreDialect } from './0001-init.js'
import { telemetryMigration } from './0002-telemetry.js'
import { templatesMigration } from './0003-templates.js'
import { volumesMigration } from './0004-volumes.js'
import { sandboxVolumeMountsMigration } from './0005-sandbox-volume-mounts.js'
import { snapshotsMigration } from './0006-snapshots.js'

/**
 * The migrations in order. Listed here rather than read from the folder, so the bundled
 * `sandbar` carries them. Kysely records applied ones in `kysely_migration`; on PostgreSQL its
 * advisory lock lets several api instances start together and migrate once.
 */
export function storeMigrations(dialect: StoreDialect): Record<string, Migration> {
  return {
    '0001-init': initMigration(dialect),
    '0002-telemetry': telemetryMigration,
    '0003-templates': templatesMigration(dialect),
    '0004-volumes': volumesMigration,
    '0005-sandbox-volume-mounts': sandboxVolumeMountsMigration,
    '0006-snapshots': snapshotsMigration,
  }
}

/** Applies every migration the database has not seen; throws the first failure. */
export async function migrateToLatest<T>(db: Kysely<T>, dialect: StoreDialect): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => storeMigrations(dialect) },
  })
  const { error } = await migrator.migrateToLatest()
  if (error !== undefined) throw error
}
