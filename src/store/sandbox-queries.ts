import type { Kysely } from 'kysely'
import type { Sandbox, SandboxPatch, SandboxState } from './index.js'
import { patchToRow, sandboxFromRow, sandboxToRow } from './sandbox-row.js'
import type { SandboxRowCache } from './sandbox-row-cache.js'
import type { Database } from './schema.js'
import type { TokenSeal } from './token-seal.js'

/**
 * Single-sandbox reads and writes, the running count and the expiry scan. `rowCache` only for
 * a database no other process writes (sandbox-row-cache.ts).
 */
export function sandboxQueries(db: Kysely<Database>, seal: TokenSeal, rowCache?: SandboxRowCache) {
  async function getSandbox(sandboxID: string, teamID?: string): Promise<Sandbox | undefined> {
    const load = () =>
      db.selectFrom('sandboxes').selectAll().where('sandbox_id', '=', sandboxID).executeTakeFirst()
    const row = rowCache === undefined ? await load() : await rowCache.read(sandboxID, load)
    if (row === undefined || (teamID !== undefined && row.team_id !== teamID)) return undefined
    return sandboxFromRow(row, seal)
  }

  /** Runs a write to `sandboxID`'s row; the cache forgets the row once it has ended. */
  async function writing<T>(sandboxID: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write()
    } finally {
      rowCache?.wrote(sandboxID)
    }
  }

  return {
    async insertSandbox(sandbox: Sandbox): Promise<void> {
      const pairs = Object.entries(sandbox.metadata).map(([key, value]) => ({
        sandbox_id: sandbox.sandboxID,
        key,
        value,
      }))
      await writing(sandbox.sandboxID, () =>
        db.transaction().execute(async (trx) => {
          await trx.insertInto('sandboxes').values(sandboxToRow(sandbox, seal)).execute()
          if (pairs.length > 0) await trx.insertInto('sandbox_metadata').values(pairs).execute()
        }),
      )
    },

    getSandbox,

    async getSandboxes(sandboxIDs: string[]): Promise<Map<string, Sandbox>> {
      const found = new Map<string, Sandbox>()
      if (sandboxIDs.length === 0) return found
      const rows = await db
        .selectFrom('sandboxes')
        .selectAll()
        .where('sandbox_id', 'in', sandboxIDs)
        .execute()
      for (const row of rows) found.set(row.sandbox_id, sandboxFromRow(row, seal))
      return found
    },

    async updateSandbox(
      sandboxID: string,
      patch: SandboxPatch,
      ifState?: SandboxState,
    ): Promise<Sandbox | undefined> {
      const columns = patchToRow(patch)
      if (Object.values(columns).every((value) => value === undefined)) {
        // Nothing to write; still answer whether it exists (in that state).
        const current = await getSandbox(sandboxID)
        return ifState === undefined || current?.state === ifState ? current : undefined
      }
      let query = db.updateTable('sandboxes').set(columns).where('sandbox_id', '=', sandboxID)
      if (ifState !== undefined) query = query.where('state', '=', ifState)
      const row = await writing(sandboxID, () => query.returningAll().executeTakeFirst())
      return row === undefined ? undefined : sandboxFromRow(row, seal)
    },

    async removeSandbox(sandboxID: string): Promise<boolean> {
      // Its sandbox_metadata rows go with it (on delete cascade).
      const removed = await writing(sandboxID, () =>
        db
          .deleteFrom('sandboxes')
          .where('sandbox_id', '=', sandboxID)
          .returning('sandbox_id')
          .executeTakeFirst(),
      )
      return removed !== undefined
    },

    async countRunning(teamID: string): Promise<number> {
      const { count } = await db
        .selectFrom('sandboxes')
        .select((eb) => eb.fn.countAll().as('count'))
        .where('team_id', '=', teamID)
        .where('state', 'in', ['running', 'starting'])
        .executeTakeFirstOrThrow()
      return Number(count)
    },

    async allSandboxes(): Promise<Sandbox[]> {
      const rows = await db.selectFrom('sandboxes').selectAll().orderBy('sandbox_id').execute()
      return rows.map((row) => sandboxFromRow(row, seal))
    },

    async expiredSandboxes(now: Date): Promise<Sandbox[]> {
      // Only running sandboxes time out: a paused one's endAt is its pause time (§1.3).
      const rows = await db
        .selectFrom('sandboxes')
        .selectAll()
        .where('state', '=', 'running')
        .where('end_at', '<=', now.getTime())
        .orderBy('end_at')
        .orderBy('sandbox_id')
        .execute()
      return rows.map((row) => sandboxFromRow(row, seal))
    },
  }
}
