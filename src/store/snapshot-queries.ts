import type { Kysely } from 'kysely'
import type { SnapshotEntry, SnapshotQuery } from './index.js'
import { jsonColumns } from './json-columns.js'
import type { Database } from './schema.js'
import { templateFromRow } from './template-row.js'

/** Snapshot templates: the templates `POST /sandboxes/{id}/snapshots` made (issue 14). */
export function snapshotQueries(db: Kysely<Database>) {
  return {
    async listSnapshots(query: SnapshotQuery): Promise<SnapshotEntry[]> {
      let select = db
        .selectFrom('templates as t')
        .innerJoin('template_tags as g', 'g.template_id', 't.template_id')
        .innerJoin('template_builds as b', 'b.build_id', 'g.build_id')
        .selectAll('t')
        .select('g.tag')
        .where('t.team_id', '=', query.teamID)
        .where('t.deleted_at', 'is', null)
        .where('t.source_sandbox_id', 'is not', null)
        .where('b.status', '=', 'ready')
      if (query.sourceSandboxID !== undefined)
        select = select.where('t.source_sandbox_id', '=', query.sourceSandboxID)
      if (query.templateID !== undefined)
        select = select.where('t.template_id', '=', query.templateID)
      if (query.tag !== undefined) select = select.where('g.tag', '=', query.tag)
      const rows = await select
        .orderBy('t.created_at', 'desc')
        .orderBy('t.template_id', 'desc')
        .orderBy('g.created_at', 'desc')
        .orderBy('b.created_at', 'desc')
        .orderBy('g.tag')
        .execute()
      // One entry per template: its first row, the tag pointed most recently.
      const entries = new Map<string, SnapshotEntry>()
      for (const { tag, ...row } of rows) {
        if (!entries.has(row.template_id))
          entries.set(row.template_id, { template: templateFromRow(row), tag })
      }
      return [...entries.values()]
    },

    async liveSnapshotBuildIDs(): Promise<Set<string>> {
      const rows = await db
        .selectFrom('template_builds as b')
        .innerJoin('templates as t', 't.template_id', 'b.template_id')
        .select(['b.build_id', 'b.result'])
        .where('t.deleted_at', 'is', null)
        .where('b.status', '=', 'ready')
        .execute()
      return new Set(
        rows
          .filter(({ result }) => result !== null && jsonColumns.buildResult(result).snapshot)
          .map(({ build_id }) => build_id),
      )
    },
  }
}
