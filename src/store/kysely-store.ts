import type { Kysely } from 'kysely'
import { buildLogQueries } from './build-log-queries.js'
import { buildQueries } from './build-queries.js'
import type { Store } from './index.js'
import { layerQueries } from './layer-queries.js'
import { logQueries } from './log-queries.js'
import { metricQueries } from './metric-queries.js'
import type { StoreDialect } from './migrations/0001-init.js'
import { retentionQueries } from './retention-queries.js'
import { listSandboxes } from './sandbox-list.js'
import { sandboxQueries } from './sandbox-queries.js'
import { SandboxRowCache } from './sandbox-row-cache.js'
import type { Database } from './schema.js'
import { snapshotQueries } from './snapshot-queries.js'
import { tagQueries } from './tag-queries.js'
import { teamQueries } from './team-queries.js'
import { templateQueries } from './template-queries.js'
import type { TokenSeal } from './token-seal.js'
import { volumeQueries } from './volume-queries.js'

/** The one Store implementation: every query is written once, for both dialects. */
export function createKyselyStore(
  db: Kysely<Database>,
  dialect: StoreDialect,
  seal: TokenSeal,
): Store {
  return {
    ...teamQueries(db),
    // SQLite's file is this serve's alone; PostgreSQL is shared by several api instances.
    ...sandboxQueries(db, seal, dialect === 'sqlite' ? new SandboxRowCache() : undefined),
    listSandboxes: (query) => listSandboxes(db, seal, query),
    ...logQueries(db, dialect),
    ...metricQueries(db),
    ...retentionQueries(db),
    ...templateQueries(db),
    ...buildQueries(db),
    ...tagQueries(db),
    ...layerQueries(db),
    ...snapshotQueries(db),
    ...buildLogQueries(db),
    ...volumeQueries(db),
    close: () => db.destroy(),
  }
}
