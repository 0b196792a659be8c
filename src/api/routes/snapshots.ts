import { Hono } from 'hono'
import type { AuthEnv } from '../auth.js'
import type { SandboxForks } from '../sandbox-forks.js'
import { sandboxIDFromPath } from '../sandbox-ids.js'
import { sandboxReply } from '../sandbox-views.js'
import {
  forkRequestSchema,
  snapshotListQuerySchema,
  snapshotRequestSchema,
} from '../schemas/snapshot-requests.js'
import { jsonBody, queryParams } from '../schemas/validate.js'
import type { SnapshotService } from '../snapshot-service.js'
import { snapshotInfo } from '../snapshot-views.js'
import { pageForQuery } from '../template-pages.js'

/**
 * The checkpoint routes of wire contract §1.2: snapshots (deleted as templates, routes/
 * templates.ts) and forks. `domain` is the sandbox domain fork replies carry.
 */
export function snapshotRoutes(snapshots: SnapshotService, forks: SandboxForks, domain: string) {
  const app = new Hono<AuthEnv>()

  app.post('/sandboxes/:sandboxID/snapshots', jsonBody(snapshotRequestSchema), async (c) => {
    const team = c.get('team')
    const sandboxID = sandboxIDFromPath(c.req.param('sandboxID'))
    const entry = await snapshots.create(team, sandboxID, c.req.valid('json').name)
    return c.json(snapshotInfo(entry, team.slug), 201)
  })

  app.get('/snapshots', queryParams(snapshotListQuerySchema), async (c) => {
    const query = c.req.valid('query')
    const team = c.get('team')
    const entries = await snapshots.list(team, {
      sandboxID: query.sandboxID === undefined ? undefined : sandboxIDFromPath(query.sandboxID),
      name: query.name,
    })
    const page = pageForQuery(c, entries, (entry) => entry.template.templateID, query)
    return c.json(page.map((entry) => snapshotInfo(entry, team.slug)))
  })

  app.post('/sandboxes/:sandboxID/fork', jsonBody(forkRequestSchema), async (c) => {
    const sandboxID = sandboxIDFromPath(c.req.param('sandboxID'))
    const results = await forks.fork(c.get('team'), sandboxID, c.req.valid('json'))
    return c.json(
      results.map((result) =>
        'sandbox' in result
          ? { sandbox: sandboxReply(result.sandbox, domain) }
          : { error: result.error.body() },
      ),
      201,
    )
  })

  return app
}
