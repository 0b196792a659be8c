import { Hono } from 'hono'
import { InvalidNextTokenError, type ListedSandboxState } from '../../store/index.js'
import type { AuthEnv } from '../auth.js'
import { apiErrors } from '../errors.js'
import type { SandboxService } from '../sandbox-service.js'
import { listedSandbox } from '../sandbox-views.js'
import { listQuerySchema, listV1QuerySchema, REQUEST_LIMITS } from '../schemas/sandbox-requests.js'
import { queryParams } from '../schemas/validate.js'

/** The list routes of wire contract §1.2: v1 (running, unpaged) and v2 (filtered, paged). */
export function sandboxListRoutes(service: SandboxService) {
  const app = new Hono<AuthEnv>()

  app.get('/sandboxes', queryParams(listV1QuerySchema), async (c) => {
    const metadata = parseMetadata(c.req.valid('query').metadata)
    const sandboxes = await service.listRunning(c.get('team'), metadata)
    return c.json(sandboxes.map((sandbox) => listedSandbox(sandbox)))
  })

  app.get('/v2/sandboxes', queryParams(listQuerySchema), async (c) => {
    const query = c.req.valid('query')
    const team = c.get('team')
    const states = parseStates(query.state)
    const page = await service
      .list({
        teamID: team.id,
        states,
        metadata: parseMetadata(query.metadata),
        order: query.order,
        startedAfter: query.startedAfter === undefined ? undefined : new Date(query.startedAfter),
        template: query.template,
        limit: parseLimit(query.limit),
        nextToken: query.nextToken,
      })
      .catch((error: unknown) => {
        if (error instanceof InvalidNextTokenError) throw apiErrors.validation('invalid nextToken')
        throw error
      })
    if (page.nextToken !== undefined) c.header('X-Next-Token', page.nextToken)
    // §1.1: X-Total-Running accompanies lists that asked for running sandboxes.
    if (states.includes('running'))
      c.header('X-Total-Running', String(await service.countRunning(team)))
    const tiers = states.includes('paused') ? await service.pausedTiers() : new Map()
    return c.json(
      page.sandboxes.map((sandbox) => listedSandbox(sandbox, tiers.get(sandbox.sandboxID))),
    )
  })

  return app
}

/** `state=running,paused` (§1.1 arrays are comma-joined); default both. */
function parseStates(value: string | undefined): ListedSandboxState[] {
  if (value === undefined || value === '') return ['running', 'paused']
  return value.split(',').map((state) => {
    if (state !== 'running' && state !== 'paused')
      throw apiErrors.validation(`invalid state '${state}'`)
    return state
  })
}

/**
 * §1.1: a query string of pairs whose keys and values the SDK URL-encoded once more. A pair
 * that does not decode (`%zz`) is the client's mistake: 400, as for any bad query.
 */
function parseMetadata(value: string | undefined): Record<string, string> | undefined {
  if (value === undefined || value === '') return undefined
  const pairs: Record<string, string> = {}
  try {
    for (const [key, pairValue] of new URLSearchParams(value))
      pairs[decodeURIComponent(key)] = decodeURIComponent(pairValue)
  } catch {
    throw apiErrors.validation('metadata must be URL-encoded key=value pairs joined by &')
  }
  // A sandbox holds no more pairs than this, and each pair is one subquery.
  const { entries } = REQUEST_LIMITS.metadata
  if (Object.keys(pairs).length > entries)
    throw apiErrors.validation(`metadata must have at most ${entries} entries`)
  return pairs
}

/** §1.1: `limit` is 1..100, default 100. */
function parseLimit(value: string | undefined): number {
  if (value === undefined) return 100
  const limit = Number(value)
  if (limit < 1 || limit > 100) throw apiErrors.validation('limit must be between 1 and 100')
  return limit
}
