import type { Insertable } from 'kysely'
import { Migrator } from 'kysely/migration'
import { afterEach, describe, expect, it } from 'vitest'
import { createStore, type Store, type StoreConfig } from '../../src/store/index.js'
import { createKyselyStore } from '../../src/store/kysely-store.js'
import { storeMigrations } from '../../src/store/migrations/migrate.js'
import { openPostgres } from '../../src/store/postgres-store.js'
import { sandboxToRow } from '../../src/store/sandbox-row.js'
import type { SandboxTable } from '../../src/store/schema.js'
import { openSqlite } from '../../src/store/sqlite-store.js'
import { TokenSeal } from '../../src/store/token-seal.js'
import { BASE_TIME, sandbox, TEST_TOKEN_KEY } from '../store/store-fixture.js'
import { template } from '../store/template-fixture.js'

/** Upgrades of a database an earlier version made (part of runStoreCases). */
export function runMigrationCases(newConfig: () => Promise<StoreConfig>): void {
  describe('migrations', () => {
    const open: Store[] = []
    afterEach(async () => {
      await Promise.all(open.splice(0).map((store) => store.close()))
    })

    const at = (ms: number) => new Date(BASE_TIME + ms)

    it('migrates a database holding sandboxes from before templates, keeping its data', async () => {
      const config = await newConfig()
      const { db, dialect } =
        'sqlitePath' in config ? openSqlite(config.sqlitePath) : openPostgres(config.postgresUrl)
      const before = Object.fromEntries(
        Object.entries(storeMigrations(dialect)).filter(([name]) => name < '0003'),
      )
      expect(Object.keys(before)).toEqual(['0001-init', '0002-telemetry'])
      const migrated = await new Migrator({
        db,
        provider: { getMigrations: async () => before },
      }).migrateToLatest()
      expect(migrated.error).toBeUndefined()
      // The store of that version, minus its template methods: sandboxes, logs, metrics.
      const seal = new TokenSeal(TEST_TOKEN_KEY)
      const old = createKyselyStore(db, dialect, seal)
      const { team } = await old.ensureFirstTeam()
      const kept = sandbox(team.id, 0, { envdAccessToken: 'secret', metadata: { app: 'x' } })
      const log = { timestamp: at(1), level: 'info' as const, message: 'hi', fields: { a: '1' } }
      // That version's row: every column but those later migrations add, and its metadata.
      const { volume_mounts: _mounts, build_id: _build, ...row } = sandboxToRow(kept, seal)
      await db
        .insertInto('sandboxes')
        .values(row as Insertable<SandboxTable>)
        .execute()
      await db
        .insertInto('sandbox_metadata')
        .values({ sandbox_id: kept.sandboxID, key: 'app', value: 'x' })
        .execute()
      await old.appendOutput(team.id, kept.sandboxID, [log], 42)
      await old.close()

      const store = await createStore(config)
      open.push(store)
      expect(await store.ensureFirstTeam()).toEqual({ team, created: false })
      expect(await store.getSandbox(kept.sandboxID)).toEqual(kept)
      expect(await store.listLogs(team.id, kept.sandboxID, { limit: 10 })).toEqual([log])
      expect(await store.outputBytesRead(kept.sandboxID)).toBe(42)
      const t = template(team.id, 'py', 0)
      await store.insertTemplate(t)
      expect(await store.listTemplates(team.id)).toEqual([t])
    })
  })
}
