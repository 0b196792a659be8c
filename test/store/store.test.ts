import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, it } from 'vitest'
import * as z from 'zod/mini'
import type { StoreConfig } from '../../src/store/index.js'
import { type RawApiKeyRow, runStoreCases } from '../cases/store.cases.js'
import { POSTGRES_BIN, PostgresCluster } from './postgres-cluster.js'
import { TEST_TOKEN_KEY } from './store-fixture.js'

const KEY_COLUMNS = 'select key_hash, last_used_at from api_keys order by created_at'

/** Raw rows as the drivers return them: pg gives int8 as a string unless told otherwise. */
const rawApiKeys = z.array(
  z.object({
    key_hash: z.string(),
    last_used_at: z.nullable(z.union([z.number(), z.string()])),
  }),
)

function parseApiKeys(rows: unknown): RawApiKeyRow[] {
  return rawApiKeys.parse(rows).map((row) => ({
    key_hash: row.key_hash,
    last_used_at: row.last_used_at === null ? null : Number(row.last_used_at),
  }))
}

/** Runs one statement on the SQLite file behind the store; the rows it returns, if any. */
async function sqliteRows(config: StoreConfig, text: string): Promise<unknown[]> {
  if (!('sqlitePath' in config)) throw new Error('not an SQLite config')
  const database = new BetterSqlite3(config.sqlitePath)
  try {
    const statement = database.prepare(text)
    if (statement.reader) return statement.all()
    statement.run()
    return []
  } finally {
    database.close()
  }
}

/** Runs one statement on the PostgreSQL database behind the store. */
async function postgresRows(config: StoreConfig, text: string): Promise<unknown[]> {
  if (!('postgresUrl' in config)) throw new Error('not a PostgreSQL config')
  const client = new pg.Client({ connectionString: config.postgresUrl })
  await client.connect()
  try {
    return (await client.query(text)).rows
  } finally {
    await client.end()
  }
}

describe('sqlite', () => {
  let dir = ''
  let files = 0
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sbt-sqlite-'))
  })
  afterAll(async () => rm(dir, { recursive: true, force: true }))

  runStoreCases({
    name: 'sqlite',
    async newConfig() {
      files += 1
      return { sqlitePath: join(dir, `store-${files}.sqlite`), tokenKey: TEST_TOKEN_KEY }
    },
    async readApiKeys(config: StoreConfig): Promise<RawApiKeyRow[]> {
      return parseApiKeys(await sqliteRows(config, KEY_COLUMNS))
    },
    sql: sqliteRows,
  })
})

if (PostgresCluster.available()) {
  describe('postgres', () => {
    const cluster = new PostgresCluster()
    beforeAll(() => cluster.start())
    afterAll(() => cluster.stop())

    runStoreCases({
      name: 'postgres',
      async newConfig() {
        return { postgresUrl: await cluster.newDatabase(), tokenKey: TEST_TOKEN_KEY }
      },
      async readApiKeys(config: StoreConfig): Promise<RawApiKeyRow[]> {
        return parseApiKeys(await postgresRows(config, KEY_COLUMNS))
      },
      sql: postgresRows,
    })
  })
} else {
  describe('postgres store', () => {
    it.skip(`skipped: PostgreSQL server binaries are not installed in ${POSTGRES_BIN}`, () =>
      undefined)
  })
}
