import { Hono } from 'hono'
import type { AuthEnv } from '../auth.js'
import { apiErrors } from '../errors.js'
import { sandboxIDFromPath } from '../sandbox-ids.js'
import { metricReply, type SandboxMetric } from '../sandbox-metrics.js'
import type { SandboxService } from '../sandbox-service.js'
import { metricsBatchSchema, metricsRangeSchema } from '../schemas/sandbox-requests.js'
import { queryParams } from '../schemas/validate.js'

/** §1.2: `sandbox_ids` holds at most 100 unique IDs. */
const MAX_BATCH = 100

/**
 * The metrics routes of wire contract §1.2. Mounted before the other sandbox routes so that
 * `/sandboxes/metrics` is not taken for a sandbox ID.
 */
export function sandboxMetricsRoutes(service: SandboxService) {
  const app = new Hono<AuthEnv>()

  app.get('/sandboxes/metrics', queryParams(metricsBatchSchema), async (c) => {
    const ids = c.req
      .valid('query')
      .sandbox_ids.split(',')
      .filter((id) => id !== '')
    if (ids.length === 0) throw apiErrors.validation('sandbox_ids must not be empty')
    if (ids.length > MAX_BATCH)
      throw apiErrors.validation(`sandbox_ids must hold at most ${MAX_BATCH} IDs`)
    if (new Set(ids).size !== ids.length) throw apiErrors.validation('sandbox_ids must be unique')
    const latest = await service.latestMetrics(c.get('team'), ids.map(sandboxIDFromPath))
    // §1.3 SandboxesWithMetrics: sandboxes that are unknown or have no sample are left out.
    const sandboxes: Record<string, SandboxMetric> = {}
    for (const id of ids) {
      const sample = latest.get(sandboxIDFromPath(id))
      if (sample !== undefined) sandboxes[id] = metricReply(sample)
    }
    return c.json({ sandboxes })
  })

  app.get('/sandboxes/:sandboxID/metrics', queryParams(metricsRangeSchema), async (c) => {
    const { start, end } = c.req.valid('query')
    const samples = await service.metrics(
      c.get('team'),
      sandboxIDFromPath(c.req.param('sandboxID')),
      {
        start: start === undefined ? undefined : new Date(Number(start) * 1000),
        // The end is a unix second: every sample within that second is in range.
        end: end === undefined ? undefined : new Date(Number(end) * 1000 + 999),
      },
    )
    return c.json(samples.map(metricReply))
  })

  return app
}
