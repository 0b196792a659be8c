import type { Kysely } from 'kysely'
import type { TemplateBuild, TemplateBuildPatch, TemplateBuildStatus } from './index.js'
import type { Database } from './schema.js'
import { buildFromRow, buildPatchToRow, buildToRow } from './template-row.js'

/** Template builds: registered waiting, moved by the builder to ready or error. */
export function buildQueries(db: Kysely<Database>) {
  async function getBuild(buildID: string): Promise<TemplateBuild | undefined> {
    const row = await db
      .selectFrom('template_builds')
      .selectAll()
      .where('build_id', '=', buildID)
      .executeTakeFirst()
    return row === undefined ? undefined : buildFromRow(row)
  }

  return {
    async insertBuild(build: TemplateBuild): Promise<void> {
      await db.insertInto('template_builds').values(buildToRow(build)).execute()
    },

    getBuild,

    async listBuilds(templateID: string): Promise<TemplateBuild[]> {
      const rows = await db
        .selectFrom('template_builds')
        .selectAll()
        .where('template_id', '=', templateID)
        .orderBy('created_at', 'desc')
        .orderBy('build_id', 'desc')
        .execute()
      return rows.map(buildFromRow)
    },

    async updateBuild(
      buildID: string,
      patch: TemplateBuildPatch,
      ifStatus?: TemplateBuildStatus[],
    ): Promise<TemplateBuild | undefined> {
      // No status is in an empty list (and `in ()` is no SQL).
      if (ifStatus?.length === 0) return undefined
      const columns = buildPatchToRow(patch)
      if (Object.values(columns).every((value) => value === undefined)) {
        // Nothing to write; still answer whether it exists (in one of those states).
        const current = await getBuild(buildID)
        return current === undefined || ifStatus === undefined || ifStatus.includes(current.status)
          ? current
          : undefined
      }
      let query = db.updateTable('template_builds').set(columns).where('build_id', '=', buildID)
      if (ifStatus !== undefined) query = query.where('status', 'in', ifStatus)
      const row = await query.returningAll().executeTakeFirst()
      return row === undefined ? undefined : buildFromRow(row)
    },

    async unfinishedBuilds(): Promise<TemplateBuild[]> {
      const rows = await db
        .selectFrom('template_builds')
        .selectAll()
        .where('status', 'in', ['waiting', 'building'])
        .orderBy('created_at')
        .orderBy('build_id')
        .execute()
      return rows.map(buildFromRow)
    },
  }
}
