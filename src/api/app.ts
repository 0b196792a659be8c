import { Hono } from 'hono'
import type { Agent } from '../agent/index.js'
import type { Logger } from '../logger.js'
import type { Store } from '../store/index.js'
import { apiKeyAuth } from './auth.js'
import { requestBodyLimit } from './body-limit.js'
import { ApiError, apiErrors } from './errors.js'
import { sandboxChangesRoutes } from './routes/sandbox-changes.js'
import { sandboxLifecycleRoutes } from './routes/sandbox-lifecycle.js'
import { sandboxListRoutes } from './routes/sandbox-lists.js'
import { sandboxLogRoutes } from './routes/sandbox-logs.js'
import { sandboxMetricsRoutes } from './routes/sandbox-metrics.js'
import { sandboxRoutes } from './routes/sandboxes.js'
import { snapshotRoutes } from './routes/snapshots.js'
import { templateBuildRoutes } from './routes/template-builds.js'
import { templateTagRoutes } from './routes/template-tags.js'
import { templateUploadRoutes } from './routes/template-uploads.js'
import { templateRoutes } from './routes/templates.js'
import { unsupportedRoutes } from './routes/unsupported-routes.js'
import { volumeContentRoutes } from './routes/volume-content.js'
import { volumeRoutes } from './routes/volumes.js'
import type { SandboxForks } from './sandbox-forks.js'
import type { SandboxService } from './sandbox-service.js'
import type { SnapshotService } from './snapshot-service.js'
import type { TemplateService } from './template-service.js'
import type { TemplateUploads } from './template-uploads.js'
import type { VolumeService } from './volume-service.js'
import type { VolumeTokens } from './volume-tokens.js'

export interface ApiAppOptions {
  store: Store
  service: SandboxService
  snapshots: SnapshotService
  forks: SandboxForks
  templates: TemplateService
  uploads: TemplateUploads
  volumes: VolumeService
  /** The content API's way to the volumes' files, and the tokens it checks. */
  agent: Agent
  volumeTokens: VolumeTokens
  /** The sandbox domain sandboxes are reached under (`<port>-<id>.<domain>`). */
  domain: string
  logger: Logger
}

/**
 * The largest request body the API reads. The biggest real body, a create with many env vars,
 * is far smaller (schemas/sandbox-requests.ts bounds its parts); without a bound one request
 * could hold the process's memory.
 */
export const MAX_BODY_BYTES = 1024 * 1024

/** The E2B REST API (wire contract §1): every error leaves as `{code, message}`. */
export function createApiApp(options: ApiAppOptions): Hono {
  const { store, service, templates, uploads, domain, logger } = options
  const app = new Hono()
  // §1.2: health needs no credentials.
  app.get('/health', (c) => c.body(null, 204))
  // Signed instead of keyed, and larger than the body limit allows (its own cap).
  app.route('/', templateUploadRoutes(uploads))
  // A volume token instead of the API key (wave2-contracts §2.3), and file bodies streamed
  // to the volume, whose size limit is the cap; its errors carry a string code.
  app.route(
    '/',
    volumeContentRoutes({ store, agent: options.agent, tokens: options.volumeTokens, logger }),
  )
  // Before authentication: a body is refused unread whoever sends it (Content-Length), or as
  // soon as a streamed one passes the limit.
  app.use('*', requestBodyLimit(MAX_BODY_BYTES))
  app.use('*', apiKeyAuth(store))
  // Metrics first: `/sandboxes/metrics` must not be read as `/sandboxes/{sandboxID}`.
  app.route('/', sandboxMetricsRoutes(service))
  app.route('/', sandboxListRoutes(service))
  app.route('/', sandboxRoutes(service, domain))
  app.route('/', sandboxLifecycleRoutes(service, domain))
  app.route('/', sandboxLogRoutes(service))
  app.route('/', sandboxChangesRoutes(service))
  app.route('/', snapshotRoutes(options.snapshots, options.forks, domain))
  // Tags first: `/templates/tags` must not be read as `/templates/{templateID}`.
  app.route('/', templateTagRoutes(templates))
  app.route('/', templateBuildRoutes(templates, uploads))
  app.route('/', templateRoutes(templates))
  app.route('/', volumeRoutes(options.volumes))
  // The contract's routes Sandbar lacks answer 501; truly unknown paths stay 404 (below).
  app.route('/', unsupportedRoutes())
  app.onError((error, c) => {
    if (error instanceof ApiError) return c.json(error.body(), error.status)
    // The cause is logged, never sent (STYLE habit 7).
    logger.error({ err: error, method: c.req.method, path: c.req.path }, 'request failed')
    const internal = apiErrors.internal()
    return c.json(internal.body(), internal.status)
  })
  app.notFound((c) => c.json({ code: 404, message: 'Not Found' }, 404))
  return app
}
