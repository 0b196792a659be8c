import { type Kysely, sql } from 'kysely'
import type { Migration } from 'kysely/migration'
import type { StoreDialect } from './0001-init.js'
import { rowKeyColumn } from './row-key.js'

/** Templates, their builds, tags and build logs (schema.ts, issue 11). */
export function templatesMigration(dialect: StoreDialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTemplateTable(db)
      await createBuildTable(db)
      await createTagTable(db)
      await createBuildLogTable(db, dialect)
    },
  }
}

async function createTemplateTable(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('templates')
    .addColumn('template_id', 'text', (col) => col.primaryKey())
    .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('public', 'integer', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .addColumn('last_spawned_at', 'bigint')
    .addColumn('spawn_count', 'integer', (col) => col.notNull())
    .addColumn('deleted_at', 'bigint')
    .execute()
  // A name belongs to one live template of the team; a deleted one leaves it free. The same
  // index serves the lookups by name and the team's list, both of live templates only.
  await db.schema
    .createIndex('templates_team_live_name')
    .on('templates')
    .columns(['team_id', 'name'])
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute()
}

async function createBuildTable(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('template_builds')
    .addColumn('build_id', 'text', (col) => col.primaryKey())
    .addColumn('template_id', 'text', (col) => col.notNull().references('templates.template_id'))
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .addColumn('finished_at', 'bigint')
    .addColumn('cpu_count', 'integer', (col) => col.notNull())
    .addColumn('memory_mb', 'integer', (col) => col.notNull())
    .addColumn('disk_size_mb', 'integer', (col) => col.notNull())
    .addColumn('envd_version', 'text')
    .addColumn('tags', 'text', (col) => col.notNull())
    .addColumn('result', 'text')
    .addColumn('failure', 'text')
    // The target of template_tags' key: a tag points only at a build of its own template.
    .addUniqueConstraint('template_builds_template_build', ['template_id', 'build_id'])
    .execute()
  // A template's builds newest first, and its newest ready build (layersInUse).
  await db.schema
    .createIndex('template_builds_template_created')
    .on('template_builds')
    .columns(['template_id', 'created_at'])
    .execute()
  // What a restart finds unfinished.
  await db.schema
    .createIndex('template_builds_status')
    .on('template_builds')
    .column('status')
    .execute()
}

async function createTagTable(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('template_tags')
    .addColumn('template_id', 'text', (col) => col.notNull())
    .addColumn('tag', 'text', (col) => col.notNull())
    .addColumn('build_id', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('template_tags_pk', ['template_id', 'tag'])
    .addForeignKeyConstraint(
      'template_tags_build',
      ['template_id', 'build_id'],
      'template_builds',
      ['template_id', 'build_id'],
    )
    .execute()
  // Whether a build has a tag (layersInUse).
  await db.schema
    .createIndex('template_tags_build')
    .on('template_tags')
    .column('build_id')
    .execute()
}

/** Entries are read back by position, so the row key is their order (as sandbox_logs). */
async function createBuildLogTable(db: Kysely<unknown>, dialect: StoreDialect): Promise<void> {
  const rowKey = rowKeyColumn(dialect)
  await db.schema
    .createTable('template_build_logs')
    .addColumn('id', rowKey.type, rowKey.build)
    .addColumn('build_id', 'text', (col) => col.notNull().references('template_builds.build_id'))
    .addColumn('ts', 'bigint', (col) => col.notNull())
    .addColumn('level', 'text', (col) => col.notNull())
    .addColumn('message', 'text', (col) => col.notNull())
    .addColumn('step', 'text')
    .execute()
  await db.schema
    .createIndex('template_build_logs_build')
    .on('template_build_logs')
    .columns(['build_id', 'id'])
    .execute()
}
