import type { Kysely } from 'kysely'
import { jsonColumns } from './json-columns.js'
import type { Database } from './schema.js'

/** Which layers live data still references: what the layer collector must keep. */
export function layerQueries(db: Kysely<Database>) {
  return {
    async layersInUse(): Promise<Set<string>> {
      const rows = await db
        .selectFrom('template_builds as b')
        .innerJoin('templates as t', 't.template_id', 'b.template_id')
        .select('b.result')
        .where('t.deleted_at', 'is', null)
        .where('b.status', '=', 'ready')
        .where(({ exists, not, or, selectFrom }) =>
          or([
            exists(
              selectFrom('template_tags as g')
                .select('g.tag')
                .whereRef('g.template_id', '=', 'b.template_id')
                .whereRef('g.build_id', '=', 'b.build_id'),
            ),
            // The newest ready build: no ready build of the template is newer (created later,
            // or at the same millisecond with a greater ID, as listBuilds orders them).
            not(
              exists(
                selectFrom('template_builds as n')
                  .select('n.build_id')
                  .whereRef('n.template_id', '=', 'b.template_id')
                  .where('n.status', '=', 'ready')
                  .where((newer) =>
                    newer.or([
                      newer('n.created_at', '>', newer.ref('b.created_at')),
                      newer.and([
                        newer('n.created_at', '=', newer.ref('b.created_at')),
                        newer('n.build_id', '>', newer.ref('b.build_id')),
                      ]),
                    ]),
                  ),
              ),
            ),
          ]),
        )
        .execute()
      const layers = new Set<string>()
      for (const { result } of rows) {
        if (result === null) continue
        const { layers: stack, cacheLayers = [] } = jsonColumns.buildResult(result)
        for (const layer of [...stack, ...cacheLayers]) layers.add(layer)
      }
      return layers
    },
  }
}
