import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { StoreDialect } from './migrations/0001-init.js'
import type { Database } from './schema.js'

/**
 * int8 (timestamps in epoch ms, counts) as a JS number, as SQLite returns it: epoch ms stay far
 * below 2^53. Set per pool, so other pg users in the process keep the default string.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: (oid, format) =>
    oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format),
}

/** A PostgreSQL database as Kysely (for several api instances, DESIGN.md § State). */
export function openPostgres(url: string): { db: Kysely<Database>; dialect: StoreDialect } {
  const pool = new pg.Pool({ connectionString: url, types })
  return {
    db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }),
    dialect: 'postgres',
  }
}
