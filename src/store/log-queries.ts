import type { Kysely } from 'kysely'
import * as z from 'zod/mini'
import type { SandboxLogEntry } from './index.js'
import { jsonColumns } from './json-columns.js'
import type { Database } from './schema.js'

const level = z.enum(['debug', 'info', 'warn', 'error'])

/** Sandbox logs, keyed by team and sandbox ID like E2B's log labels (they outlive the row). */
export function logQueries(db: Kysely<Database>) {
  return {
    async appendLogs(teamID: string, sandboxID: string, entries: SandboxLogEntry[]): Promise<void> {
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
    },

    async listLogs(
      teamID: string,
      sandboxID: string,
      options: { start?: Date; limit: number },
    ): Promise<SandboxLogEntry[]> {
      // SQLite reads a negative LIMIT as "no limit", PostgreSQL refuses it: refuse it here.
      if (!Number.isInteger(options.limit) || options.limit < 0) {
        throw new RangeError(`limit must be a non-negative integer, got ${options.limit}`)
      }
      let query = db
        .selectFrom('sandbox_logs')
        .select(['ts', 'level', 'message', 'fields'])
        .where('team_id', '=', teamID)
        .where('sandbox_id', '=', sandboxID)
      if (options.start !== undefined) query = query.where('ts', '>=', options.start.getTime())
      const rows = await query.orderBy('ts').orderBy('id').limit(options.limit).execute()
      return rows.map((row) => ({
        timestamp: new Date(row.ts),
        level: level.parse(row.level),
        message: row.message,
        fields: jsonColumns.stringMap(row.fields),
      }))
    },
  }
}
