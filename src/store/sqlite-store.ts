import { chmodSync, closeSync, openSync } from 'node:fs'
import BetterSqlite3 from 'better-sqlite3'
import { Kysely, type SqliteDatabase, SqliteDialect } from 'kysely'
import { errnoCode } from '../errno-code.js'
import type { StoreDialect } from './migrations/0001-init.js'
import type { Database } from './schema.js'

/** An SQLite file as a Kysely database (the embedded default, DESIGN.md § State). */
export function openSqlite(path: string): { db: Kysely<Database>; dialect: StoreDialect } {
  makePrivate(path)
  const database = new BetterSqlite3(path)
  // WAL lets readers (list, get) run while the lifecycle loop writes; the busy timeout makes
  // a second process on the same file wait for the lock instead of failing at once.
  database.pragma('journal_mode = WAL')
  database.pragma('busy_timeout = 5000')
  // With WAL, NORMAL syncs at checkpoints rather than at every commit (every create, kill and
  // metrics sample commits): a crash of sandbar loses nothing, a power cut may lose the last
  // commits.
  database.pragma('synchronous = NORMAL')
  // SQLite checks foreign keys only when asked; PostgreSQL always does, and both must agree.
  database.pragma('foreign_keys = ON')
  return {
    db: new Kysely<Database>({ dialect: new SqliteDialect({ database: preparingOnce(database) }) }),
    dialect: 'sqlite',
  }
}

/** How many SQL texts keep their prepared statement: the store's own queries are fewer. */
const KEPT_STATEMENTS = 512

/**
 * The database as Kysely drives it, with each SQL text prepared once: Kysely prepares every
 * query it runs (~23 µs each), and the store runs the same texts over and over (every create,
 * kill, metrics sample and list). A text past the first KEPT_STATEMENTS (an IN list of a new
 * length, say) is prepared at each run, as before. Statements run to completion at once
 * (better-sqlite3 is synchronous, and the store streams no query), so one is never in use
 * twice.
 */
function preparingOnce(database: BetterSqlite3.Database): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>()
  return {
    close: () => database.close(),
    prepare(sql) {
      const kept = statements.get(sql)
      if (kept !== undefined) return kept
      const statement = database.prepare(sql)
      if (statements.size < KEPT_STATEMENTS) statements.set(sql, statement)
      return statement
    },
  }
}

/**
 * The database holds sandbox tokens (sealed) and key hashes: it is the service's alone. SQLite
 * gives its `-wal` and `-shm` files the database file's mode, so a 0600 database keeps them
 * 0600 too; files an older install left 0644 are tightened before anything is read.
 */
function makePrivate(path: string): void {
  closeSync(openSync(path, 'a', 0o600))
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(file, 0o600)
    } catch (error) {
      if (!(errnoCode(error) === 'ENOENT')) throw error
    }
  }
}
