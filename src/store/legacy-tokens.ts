import type { Kysely } from 'kysely'
import type { Database } from './schema.js'
import { type TokenColumn, TokenSeal } from './token-seal.js'

const COLUMNS: TokenColumn[] = ['envd_access_token', 'traffic_access_token']

/**
 * Seals the tokens that stores from before token-seal.ts kept in plaintext, once, at open.
 * Each update only replaces the value it read, so two instances starting together on one
 * PostgreSQL do not seal a token twice.
 */
export async function sealLegacyTokens(db: Kysely<Database>, seal: TokenSeal): Promise<number> {
  let sealed = 0
  for (const column of COLUMNS) {
    const rows = await db
      .selectFrom('sandboxes')
      .select(['sandbox_id', column])
      .where(column, 'is not', null)
      .where(column, 'not like', 'sealed%')
      .execute()
    for (const row of rows) {
      const value = row[column]
      if (value === null || TokenSeal.isSealed(value)) continue
      await db
        .updateTable('sandboxes')
        .set({ [column]: seal.seal(row.sandbox_id, column, value) })
        .where('sandbox_id', '=', row.sandbox_id)
        .where(column, '=', value)
        .execute()
      sealed++
    }
  }
  return sealed
}
