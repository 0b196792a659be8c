import { Hono } from 'hono'
import type { AuthEnv } from '../auth.js'
import {
  buildLogsQuerySchema,
  buildStartSchema,
  buildStatusQuerySchema,
} from '../schemas/template-requests.js'
import { jsonBody, queryParams } from '../schemas/validate.js'
import type { TemplateService } from '../template-service.js'
import type { TemplateUploads } from '../template-uploads.js'
import { logEntryReply } from '../template-views.js'
import { requestOrigin } from '../upload-signature.js'

const DEFAULT_LIMIT = 100

/** The build routes of wire contract §1.2: upload links, start, status and logs (§2.1). */
export function templateBuildRoutes(service: TemplateService, uploads: TemplateUploads) {
  const app = new Hono<AuthEnv>()

  app.get('/templates/:templateID/files/:hash', async (c) => {
    // The URL must work where the client reached the API: direct, or through the proxy.
    const origin = requestOrigin(c.req.url, {
      host: c.req.header('host'),
      proto: c.req.header('x-forwarded-proto'),
    })
    const link = await uploads.link(
      c.get('team'),
      c.req.param('templateID'),
      c.req.param('hash'),
      origin,
    )
    return c.json(link, 201)
  })

  app.post('/v2/templates/:templateID/builds/:buildID', jsonBody(buildStartSchema), async (c) => {
    await service.builds.start(
      c.get('team'),
      c.req.param('templateID'),
      c.req.param('buildID'),
      c.req.valid('json'),
      c.req.header('user-agent'),
    )
    // An explicit empty length: without it the SDK's client reads the chunked empty body as
    // JSON and throws (infra's Go server sends `Content-Length: 0`).
    return c.body(null, 202, { 'content-length': '0' })
  })

  app.get(
    '/templates/:templateID/builds/:buildID/status',
    queryParams(buildStatusQuerySchema),
    async (c) => {
      const { logsOffset, limit, level } = c.req.valid('query')
      const { build, logEntries, reason } = await service.builds.status(
        c.get('team'),
        c.req.param('templateID'),
        c.req.param('buildID'),
        {
          offset: logsOffset === undefined ? 0 : Number(logsOffset),
          limit: limit === undefined ? DEFAULT_LIMIT : Number(limit),
          level,
        },
      )
      return c.json({
        templateID: build.templateID,
        buildID: build.buildID,
        status: build.status,
        // §1.3: the legacy `logs` lines belong to v1 builds, which Sandbar does not run.
        logs: [],
        logEntries: logEntries.map(logEntryReply),
        reason:
          reason === undefined
            ? undefined
            : { ...reason, logEntries: reason.logEntries.map(logEntryReply) },
      })
    },
  )

  app.get(
    '/templates/:templateID/builds/:buildID/logs',
    queryParams(buildLogsQuerySchema),
    async (c) => {
      const { cursor, limit, direction, level } = c.req.valid('query')
      const entries = await service.builds.logs(
        c.get('team'),
        c.req.param('templateID'),
        c.req.param('buildID'),
        {
          cursor: cursor === undefined ? undefined : new Date(Number(cursor)),
          limit: limit === undefined ? DEFAULT_LIMIT : Number(limit),
          direction,
          level,
        },
      )
      return c.json({ logs: entries.map(logEntryReply) })
    },
  )

  return app
}
