import { Hono } from 'hono'
import type { SandboxLogEntry } from '../../store/index.js'
import type { AuthEnv } from '../auth.js'
import { sandboxIDFromPath } from '../sandbox-ids.js'
import type { SandboxService } from '../sandbox-service.js'
import { logsV1QuerySchema, logsV2QuerySchema } from '../schemas/sandbox-requests.js'
import { queryParams } from '../schemas/validate.js'

/** Entries per answer when the client names no `limit` (E2B's log routes default to 1000). */
const DEFAULT_LIMIT = 1000

/** The sandbox log routes of wire contract §1.2, shaped as §1.3 SandboxLogs and its v2. */
export function sandboxLogRoutes(service: SandboxService) {
  const app = new Hono<AuthEnv>()

  app.get('/sandboxes/:sandboxID/logs', queryParams(logsV1QuerySchema), async (c) => {
    const { start, limit } = c.req.valid('query')
    const entries = await service.logs(c.get('team'), sandboxIDFromPath(c.req.param('sandboxID')), {
      cursor: start === undefined ? undefined : new Date(Number(start)),
      limit: limit === undefined ? DEFAULT_LIMIT : Number(limit),
    })
    // §1.3 SandboxLogs: the legacy `logs` lines beside the structured `logEntries`.
    const logs = entries.map((entry) => ({
      timestamp: entry.timestamp.toISOString(),
      line: entry.message,
    }))
    return c.json({ logs, logEntries: entries.map(entryReply) })
  })

  app.get('/v2/sandboxes/:sandboxID/logs', queryParams(logsV2QuerySchema), async (c) => {
    const { cursor, limit, direction, level, search } = c.req.valid('query')
    const entries = await service.logs(c.get('team'), sandboxIDFromPath(c.req.param('sandboxID')), {
      cursor: cursor === undefined ? undefined : new Date(Number(cursor)),
      limit: limit === undefined ? DEFAULT_LIMIT : Number(limit),
      direction,
      level,
      search,
    })
    return c.json({ logs: entries.map(entryReply) })
  })

  return app
}

/** §1.3 SandboxLogEntry: RFC 3339 timestamp, level, message, string fields. */
function entryReply(entry: SandboxLogEntry) {
  return { ...entry, timestamp: entry.timestamp.toISOString() }
}
