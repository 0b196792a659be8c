import BetterSqlite3 from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import type { StoreDialect } from './migrations/0001-init.js'
import type { Database } from './schema.js'

/** An SQLite file as a Kysely database (the embedded default, DESIGN.md § State). */
export function openSqlite(path: string): { db: Kysely<Database>; dialect: StoreDialect } {
  const database = new BetterSqlite3(path)
  // WAL lets readers (list, get) run while the lifecycle loop writes; the busy timeout makes
  // a second process on the same file wait for the lock instead of failing at once.
  database.pragma('journal_mode = WAL')
  database.pragma('busy_timeout = 5000')
  // With WAL, NORMAL syncs at checkpoints rather than at every commit (every authenticated
  // request writes last_used_at): a crash of sandbar loses nothing, a power cut may lose the
  // last commits.
  database.pragma('synchronous = NORMAL')
  // SQLite checks foreign keys only when asked; PostgreSQL always does, and both must agree.
  database.pragma('foreign_keys = ON')
  return {
    db: new Kysely<Database>({ dialect: new SqliteDialect({ database }) }),
    dialect: 'sqlite',
  }
}
