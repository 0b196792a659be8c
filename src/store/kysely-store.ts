import type { Kysely } from 'kysely'
import type { Store } from './index.js'
import { logQueries } from './log-queries.js'
import { metricQueries } from './metric-queries.js'
import type { StoreDialect } from './migrations/0001-init.js'
import { retentionQueries } from './retention-queries.js'
import { listSandboxes } from './sandbox-list.js'
import { sandboxQueries } from './sandbox-queries.js'
import type { Database } from './schema.js'
import { teamQueries } from './team-queries.js'
import type { TokenSeal } from './token-seal.js'

/** The one Store implementation: every query is written once, for both dialects. */
export function createKyselyStore(
  db: Kysely<Database>,
  dialect: StoreDialect,
  seal: TokenSeal,
): Store {
  return {
    ...teamQueries(db),
    ...sandboxQueries(db, seal),
    listSandboxes: (query) => listSandboxes(db, seal, query),
    ...logQueries(db, dialect),
    ...metricQueries(db),
    ...retentionQueries(db),
    close: () => db.destroy(),
  }
}
