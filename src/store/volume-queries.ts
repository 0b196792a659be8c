import type { Kysely, Selectable } from 'kysely'
import type { Volume } from './index.js'
import type { Database, VolumeTable } from './schema.js'

/** Volumes: live ones by team, deleted ones until the host has removed their data. */
export function volumeQueries(db: Kysely<Database>) {
  const live = () => db.selectFrom('volumes').selectAll().where('deleted_at', 'is', null)
  return {
    async insertVolume(volume: Volume): Promise<void> {
      // The partial unique index (migrations/0004-volumes.ts) refuses a taken live name.
      await db
        .insertInto('volumes')
        .values({
          volume_id: volume.volumeID,
          team_id: volume.teamID,
          name: volume.name,
          size_mb: volume.sizeMB,
          created_at: volume.createdAt.getTime(),
          deleted_at: volume.deletedAt?.getTime() ?? null,
        })
        .execute()
    },

    async getVolume(volumeID: string, teamID?: string): Promise<Volume | undefined> {
      let query = live().where('volume_id', '=', volumeID)
      if (teamID !== undefined) query = query.where('team_id', '=', teamID)
      const row = await query.executeTakeFirst()
      return row === undefined ? undefined : volumeFromRow(row)
    },

    async findVolume(teamID: string, name: string): Promise<Volume | undefined> {
      const row = await live()
        .where('team_id', '=', teamID)
        .where('name', '=', name)
        .executeTakeFirst()
      return row === undefined ? undefined : volumeFromRow(row)
    },

    async listVolumes(teamID: string): Promise<Volume[]> {
      const rows = await live()
        .where('team_id', '=', teamID)
        .orderBy('created_at')
        .orderBy('volume_id')
        .execute()
      return rows.map(volumeFromRow)
    },

    async deleteVolume(volumeID: string, teamID: string, at: Date): Promise<boolean> {
      const result = await db
        .updateTable('volumes')
        .set({ deleted_at: at.getTime() })
        .where('volume_id', '=', volumeID)
        .where('team_id', '=', teamID)
        .where('deleted_at', 'is', null)
        .executeTakeFirst()
      return result.numUpdatedRows > 0n
    },

    async deletedVolumes(): Promise<Volume[]> {
      const rows = await db
        .selectFrom('volumes')
        .selectAll()
        .where('deleted_at', 'is not', null)
        .orderBy('deleted_at')
        .execute()
      return rows.map(volumeFromRow)
    },

    async allVolumeIDs(): Promise<Set<string>> {
      const rows = await db.selectFrom('volumes').select('volume_id').execute()
      return new Set(rows.map((row) => row.volume_id))
    },

    async forgetVolume(volumeID: string): Promise<void> {
      await db
        .deleteFrom('volumes')
        .where('volume_id', '=', volumeID)
        .where('deleted_at', 'is not', null)
        .execute()
    },
  }
}

function volumeFromRow(row: Selectable<VolumeTable>): Volume {
  return {
    volumeID: row.volume_id,
    teamID: row.team_id,
    name: row.name,
    sizeMB: row.size_mb,
    createdAt: new Date(row.created_at),
    deletedAt: row.deleted_at === null ? null : new Date(row.deleted_at),
  }
}
