import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely'
import type { SandboxPage, SandboxQuery } from './index.js'
import {
  decodeSandboxCursor,
  encodeSandboxCursor,
  InvalidNextTokenError,
  type SandboxCursor,
  type SandboxOrder,
} from './sandbox-cursor.js'
import { sandboxFromRow } from './sandbox-row.js'
import type { Database } from './schema.js'
import type { TokenSeal } from './token-seal.js'

/** Wire contract §1.1: v2 lists take `limit` 1..100. */
const MAX_LIMIT = 100

type SandboxRows = ExpressionBuilder<Database, 'sandboxes'>

/**
 * `GET /v2/sandboxes` as one keyset query. Order is start time (desc or asc), then sandbox ID
 * ascending, as E2B's list sorts; the next page starts strictly after the previous page's last
 * row in that order, so rows sharing a start time are neither repeated nor skipped.
 */
export async function listSandboxes(
  db: Kysely<Database>,
  seal: TokenSeal,
  query: SandboxQuery,
): Promise<SandboxPage> {
  const { limit } = query
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new RangeError(`limit must be an integer in 1..${MAX_LIMIT}, got ${limit}`)
  }
  const order = query.order ?? 'desc'
  const cursor = query.nextToken === undefined ? undefined : decodeSandboxCursor(query.nextToken)
  if (cursor !== undefined && cursor.order !== order) {
    // E2B refuses too: replaying a token under the other order would re-serve rows.
    throw new InvalidNextTokenError('invalid next token: issued for a different sort order')
  }
  if (query.states?.length === 0) return { sandboxes: [] }
  // One row more than the page tells whether another page exists.
  const rows = await db
    .selectFrom('sandboxes')
    .selectAll()
    .where((eb) => eb.and([...filters(eb, query), ...afterCursor(eb, order, cursor)]))
    .orderBy('started_at', order)
    .orderBy('sandbox_id')
    .limit(limit + 1)
    .execute()
  const sandboxes = rows.slice(0, limit).map((row) => sandboxFromRow(row, seal))
  const last = sandboxes.at(-1)
  if (rows.length <= limit || last === undefined) return { sandboxes }
  return {
    sandboxes,
    nextToken: encodeSandboxCursor({ startedAt: last.startedAt, sandboxID: last.sandboxID, order }),
  }
}

/** The query's filters; every one must hold. */
function filters(eb: SandboxRows, query: SandboxQuery): Expression<SqlBool>[] {
  const all: Expression<SqlBool>[] = [
    eb('team_id', '=', query.teamID),
    eb('state', 'in', query.states ?? ['running', 'paused']),
  ]
  for (const [key, value] of Object.entries(query.metadata ?? {})) {
    all.push(hasMetadataPair(eb, key, value))
  }
  if (query.startedAfter !== undefined) {
    all.push(eb('started_at', '>=', query.startedAfter.getTime()))
  }
  if (query.template !== undefined) {
    all.push(eb.or([eb('template_id', '=', query.template), eb('alias', '=', query.template)]))
  }
  return all
}

/** Rows strictly after the cursor's row in (start time `order`, sandbox ID ascending). */
function afterCursor(
  eb: SandboxRows,
  order: SandboxOrder,
  cursor: SandboxCursor | undefined,
): Expression<SqlBool>[] {
  if (cursor === undefined) return []
  const time = cursor.startedAt.getTime()
  return [
    eb.or([
      eb('started_at', order === 'desc' ? '<' : '>', time),
      eb.and([eb('started_at', '=', time), eb('sandbox_id', '>', cursor.sandboxID)]),
    ]),
  ]
}

/** The metadata filter as a lookup in `sandbox_metadata` (schema.ts says why). */
function hasMetadataPair(eb: SandboxRows, key: string, value: string): Expression<SqlBool> {
  return eb.exists(
    eb
      .selectFrom('sandbox_metadata')
      .select('sandbox_metadata.key')
      .whereRef('sandbox_metadata.sandbox_id', '=', 'sandboxes.sandbox_id')
      .where('sandbox_metadata.key', '=', key)
      .where('sandbox_metadata.value', '=', value),
  )
}
