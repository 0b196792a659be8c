import { type Kysely, sql, type Transaction } from 'kysely'
import type { LogQuery, SandboxLogEntry } from './index.js'
import { jsonColumns } from './json-columns.js'
import { levelsFrom, logLevel } from './log-levels.js'
import type { StoreDialect } from './migrations/0001-init.js'
import type { Database } from './schema.js'

/** Sandbox logs, keyed by team and sandbox ID like E2B's log labels (they outlive the row). */
export function logQueries(db: Kysely<Database>, dialect: StoreDialect) {
  // A case-sensitive substring test: LIKE ignores ASCII case on SQLite and reads % and _.
  const contains = dialect === 'sqlite' ? 'instr' : 'strpos'
  return {
    appendLogs: (teamID: string, sandboxID: string, entries: SandboxLogEntry[]) =>
      insertLogs(db, teamID, sandboxID, entries),

    async listLogs(teamID: string, sandboxID: string, query: LogQuery): Promise<SandboxLogEntry[]> {
      // SQLite reads a negative LIMIT as "no limit", PostgreSQL refuses it: refuse it here.
      if (!Number.isInteger(query.limit) || query.limit < 0) {
        throw new RangeError(`limit must be a non-negative integer, got ${query.limit}`)
      }
      const backward = query.direction === 'backward'
      let select = db
        .selectFrom('sandbox_logs')
        .select(['ts', 'level', 'message', 'fields'])
        .where('team_id', '=', teamID)
        .where('sandbox_id', '=', sandboxID)
      if (query.cursor !== undefined) {
        select = select.where('ts', backward ? '<=' : '>=', query.cursor.getTime())
      }
      if (query.level !== undefined) select = select.where('level', 'in', levelsFrom(query.level))
      if (query.search !== undefined) {
        const search = query.search
        select = select.where(({ eb }) => eb(sql`${sql.raw(contains)}(message, ${search})`, '>', 0))
      }
      const order = backward ? 'desc' : 'asc'
      const rows = await select
        .orderBy('ts', order)
        .orderBy('id', order)
        .limit(query.limit)
        .execute()
      return rows.map((row) => ({
        timestamp: new Date(row.ts),
        level: logLevel.parse(row.level),
        message: row.message,
        fields: jsonColumns.stringMap(row.fields),
      }))
    },

    async outputBytesRead(sandboxID: string): Promise<number> {
      const row = await db
        .selectFrom('sandbox_output_cursors')
        .select('bytes_read')
        .where('sandbox_id', '=', sandboxID)
        .executeTakeFirst()
      return row?.bytes_read ?? 0
    },

    async appendOutput(
      teamID: string,
      sandboxID: string,
      entries: SandboxLogEntry[],
      bytesRead: number,
    ): Promise<void> {
      // Together, so a crash between them neither loses lines nor reads them twice.
      await db.transaction().execute(async (trx) => {
        await insertLogs(trx, teamID, sandboxID, entries)
        await trx
          .insertInto('sandbox_output_cursors')
          .values({ sandbox_id: sandboxID, bytes_read: bytesRead })
          .onConflict((oc) => oc.column('sandbox_id').doUpdateSet({ bytes_read: bytesRead }))
          .execute()
      })
    },
  }
}

async function insertLogs(
  db: Kysely<Database> | Transaction<Database>,
  teamID: string,
  sandboxID: string,
  entries: SandboxLogEntry[],
): Promise<void> {
  if (entries.length === 0) return
  // One statement, so the row keys follow the array and same-millisecond entries keep order.
  await db
    .insertInto('sandbox_logs')
    .values(
      entries.map((entry) => ({
        team_id: teamID,
        sandbox_id: sandboxID,
        ts: entry.timestamp.getTime(),
        level: entry.level,
        message: entry.message,
        fields: JSON.stringify(entry.fields),
      })),
    )
    .execute()
}
