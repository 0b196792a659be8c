import type { Kysely } from 'kysely'
import type { BuildLogEntry, BuildLogQuery } from './index.js'
import { levelsFrom, logLevel } from './log-levels.js'
import type { Database } from './schema.js'

/** Build logs, read by position: the status route's `logsOffset` counts filtered entries. */
export function buildLogQueries(db: Kysely<Database>) {
  return {
    async appendBuildLogs(buildID: string, entries: BuildLogEntry[]): Promise<void> {
      if (entries.length === 0) return
      // One statement, so the row keys follow the array: the order entries are read back in.
      await db
        .insertInto('template_build_logs')
        .values(
          entries.map((entry) => ({
            build_id: buildID,
            ts: entry.timestamp.getTime(),
            level: entry.level,
            message: entry.message,
            step: entry.step ?? null,
          })),
        )
        .execute()
    },

    async listBuildLogs(buildID: string, query: BuildLogQuery): Promise<BuildLogEntry[]> {
      // SQLite reads a negative LIMIT as "no limit", PostgreSQL refuses it: refuse both here.
      for (const [name, value] of [
        ['offset', query.offset],
        ['limit', query.limit],
      ] as const) {
        if (!Number.isInteger(value) || value < 0) {
          throw new RangeError(`${name} must be a non-negative integer, got ${value}`)
        }
      }
      let select = db
        .selectFrom('template_build_logs')
        .select(['ts', 'level', 'message', 'step'])
        .where('build_id', '=', buildID)
      if (query.level !== undefined) select = select.where('level', 'in', levelsFrom(query.level))
      const rows = await select.orderBy('id').limit(query.limit).offset(query.offset).execute()
      return rows.map((row) => ({
        timestamp: new Date(row.ts),
        level: logLevel.parse(row.level),
        message: row.message,
        ...(row.step === null ? {} : { step: row.step }),
      }))
    },
  }
}
