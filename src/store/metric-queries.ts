import type { Kysely, Selectable } from 'kysely'
import type { SandboxMetricSample, StoredMetricSample } from './index.js'
import type { Database, SandboxMetricTable } from './schema.js'

/**
 * Samples per insert: ten parameters each stay within SQLite's 32,766 bound parameters a
 * statement and PostgreSQL's 65,535.
 */
const SAMPLES_PER_INSERT = 1_000

/** The metrics series of sandboxes, kept after the sandbox is gone like its logs. */
export function metricQueries(db: Kysely<Database>) {
  return {
    async appendMetrics(samples: StoredMetricSample[]) {
      for (let start = 0; start < samples.length; start += SAMPLES_PER_INSERT) {
        const rows = samples.slice(start, start + SAMPLES_PER_INSERT).map(metricRow)
        await db.insertInto('sandbox_metrics').values(rows).execute()
      }
    },

    async listMetrics(
      teamID: string,
      sandboxID: string,
      range: { start?: Date; end?: Date },
    ): Promise<SandboxMetricSample[]> {
      let query = db
        .selectFrom('sandbox_metrics')
        .selectAll()
        .where('team_id', '=', teamID)
        .where('sandbox_id', '=', sandboxID)
      if (range.start !== undefined) query = query.where('ts', '>=', range.start.getTime())
      if (range.end !== undefined) query = query.where('ts', '<=', range.end.getTime())
      const rows = await query.orderBy('ts').execute()
      return rows.map(sampleFromRow)
    },

    async latestMetrics(
      teamID: string,
      sandboxIDs: string[],
    ): Promise<Map<string, SandboxMetricSample>> {
      const latest = new Map<string, SandboxMetricSample>()
      if (sandboxIDs.length === 0) return latest
      const newest = db
        .selectFrom('sandbox_metrics')
        .select(({ fn }) => ['sandbox_id', fn.max('ts').as('ts')])
        .where('team_id', '=', teamID)
        .where('sandbox_id', 'in', sandboxIDs)
        .groupBy('sandbox_id')
        .as('newest')
      const rows = await db
        .selectFrom('sandbox_metrics as m')
        .innerJoin(newest, (join) =>
          join.onRef('newest.sandbox_id', '=', 'm.sandbox_id').onRef('newest.ts', '=', 'm.ts'),
        )
        .selectAll('m')
        .where('m.team_id', '=', teamID)
        .execute()
      for (const row of rows) latest.set(row.sandbox_id, sampleFromRow(row))
      return latest
    },
  }
}

function metricRow({ teamID, sandboxID, sample }: StoredMetricSample) {
  return {
    team_id: teamID,
    sandbox_id: sandboxID,
    ts: sample.timestamp.getTime(),
    cpu_count: sample.cpuCount,
    cpu_used_pct: sample.cpuUsedPct,
    mem_used: sample.memUsed,
    mem_total: sample.memTotal,
    mem_cache: sample.memCache,
    disk_used: sample.diskUsed,
    disk_total: sample.diskTotal,
  }
}

function sampleFromRow(row: Selectable<SandboxMetricTable>): SandboxMetricSample {
  return {
    timestamp: new Date(row.ts),
    cpuCount: row.cpu_count,
    cpuUsedPct: row.cpu_used_pct,
    memUsed: row.mem_used,
    memTotal: row.mem_total,
    memCache: row.mem_cache,
    diskUsed: row.disk_used,
    diskTotal: row.disk_total,
  }
}
