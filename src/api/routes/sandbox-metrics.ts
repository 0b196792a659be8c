import { Hono } from 'hono'
import type { Agent } from '../../agent/index.js'
import type { AuthEnv } from '../auth.js'
import { ApiError, apiErrors } from '../errors.js'
import { sandboxIDFromPath } from '../sandbox-ids.js'
import { type SandboxMetric, sampleMetrics } from '../sandbox-metrics.js'
import type { SandboxService } from '../sandbox-service.js'
import { metricsBatchSchema, metricsRangeSchema } from '../schemas/sandbox-requests.js'
import { queryParams } from '../schemas/validate.js'

/** §1.2: `sandbox_ids` holds at most 100 unique IDs. */
const MAX_BATCH = 100

/**
 * The metrics routes of wire contract §1.2. Mounted before the other sandbox routes so that
 * `/sandboxes/metrics` is not taken for a sandbox ID.
 */
export function sandboxMetricsRoutes(service: SandboxService, agent: Agent) {
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
    const team = c.get('team')
    const sandboxes: Record<string, SandboxMetric> = {}
    // §1.3 SandboxesWithMetrics: sandboxes that are unknown or have no sample are left out.
    await Promise.all(
      ids.map(async (id) => {
        const sandbox = await service.get(team, sandboxIDFromPath(id)).catch(unknownAsUndefined)
        const metric = sandbox === undefined ? undefined : await sampleMetrics(agent, sandbox)
        if (metric !== undefined) sandboxes[id] = metric
      }),
    )
    return c.json({ sandboxes })
  })

  app.get('/sandboxes/:sandboxID/metrics', queryParams(metricsRangeSchema), async (c) => {
    const { start, end } = c.req.valid('query')
    const sandbox = await service.get(c.get('team'), sandboxIDFromPath(c.req.param('sandboxID')))
    const metric = await sampleMetrics(agent, sandbox)
    // The series is the current sample (see sampleMetrics), kept only if within the range.
    const inRange =
      metric !== undefined &&
      (start === undefined || metric.timestampUnix >= Number(start)) &&
      (end === undefined || metric.timestampUnix <= Number(end))
    return c.json(inRange ? [metric] : [])
  })

  return app
}

function unknownAsUndefined(error: unknown): undefined {
  if (error instanceof ApiError && error.kind === 'notFound') return undefined
  throw error
}
