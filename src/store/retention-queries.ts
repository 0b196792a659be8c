import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

/** Age-based retention of what sandboxes leave behind: log entries and metric samples. */
export function retentionQueries(db: Kysely<Database>) {
  return {
    async pruneTelemetry(before: Date): Promise<{ logs: number; metrics: number }> {
      const cutoff = before.getTime()
      const [logs, metrics] = await Promise.all([
        db.deleteFrom('sandbox_logs').where('ts', '<', cutoff).executeTakeFirst(),
        db.deleteFrom('sandbox_metrics').where('ts', '<', cutoff).executeTakeFirst(),
      ])
      return { logs: Number(logs.numDeletedRows), metrics: Number(metrics.numDeletedRows) }
    },
  }
}
