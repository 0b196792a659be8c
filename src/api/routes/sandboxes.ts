import { Hono } from 'hono'
import type { Logger } from '../../logger.js'
import { InvalidNextTokenError, type SandboxState, type Team } from '../../store/index.js'
import type { AuthEnv } from '../auth.js'
import { apiErrors } from '../errors.js'
import { sandboxIDFromPath } from '../sandbox-ids.js'
import type { SandboxService } from '../sandbox-service.js'
import { listedSandbox, sandboxDetail, sandboxReply } from '../sandbox-views.js'
import {
  connectSchema,
  listQuerySchema,
  newSandboxSchema,
  pauseSchema,
  timeoutSchema,
} from '../schemas/sandbox-requests.js'
import { jsonBody, queryParams } from '../schemas/validate.js'

/** SDK default when connect names no timeout (§4.2: "connect resets to 5 min"). */
const CONNECT_DEFAULT_TIMEOUT_S = 300

/** The sandbox routes of wire contract §1.2, in its order. */
export function sandboxRoutes(service: SandboxService, logger: Logger) {
  const app = new Hono<AuthEnv>()

  app.post('/sandboxes', jsonBody(newSandboxSchema), async (c) => {
    const sandbox = await service.create(c.get('team'), c.req.valid('json'), 'v1')
    return c.json(sandboxReply(sandbox), 201)
  })

  app.post('/v2/sandboxes', jsonBody(newSandboxSchema), async (c) => {
    const sandbox = await service.create(c.get('team'), c.req.valid('json'), 'v2')
    return c.json(sandboxReply(sandbox), 201)
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
    return c.json(page.sandboxes.map(listedSandbox))
  })

  app.get('/sandboxes/:sandboxID', async (c) => {
    const sandbox = await service.get(c.get('team'), sandboxIDFromPath(c.req.param('sandboxID')))
    return c.json(sandboxDetail(sandbox))
  })

  app.delete('/sandboxes/:sandboxID', async (c) => {
    const sandboxID = sandboxIDFromPath(c.req.param('sandboxID'))
    await service.kill(c.get('team'), sandboxID)
    logger.info({ sandboxID }, 'sandbox killed')
    return c.body(null, 204)
  })

  app.post('/sandboxes/:sandboxID/pause', jsonBody(pauseSchema), async (c) => {
    await service.pause(c.get('team'), sandboxIDFromPath(c.req.param('sandboxID')))
    return c.body(null, 204)
  })

  app.post('/sandboxes/:sandboxID/connect', jsonBody(connectSchema), async (c) => {
    const { timeout } = c.req.valid('json')
    // §1.3 ConnectSandbox: `timeout` is required in v1.
    if (timeout === undefined) throw apiErrors.validation('timeout is required')
    return connectReply(c.get('team'), c.req.param('sandboxID'), timeout)
  })

  app.post('/v2/sandboxes/:sandboxID/connect', jsonBody(connectSchema), async (c) => {
    const { timeout } = c.req.valid('json')
    return connectReply(
      c.get('team'),
      c.req.param('sandboxID'),
      timeout ?? CONNECT_DEFAULT_TIMEOUT_S,
    )
  })

  app.post('/sandboxes/:sandboxID/timeout', jsonBody(timeoutSchema), async (c) => {
    const { timeout } = c.req.valid('json')
    await service.setTimeout(c.get('team'), sandboxIDFromPath(c.req.param('sandboxID')), timeout)
    return c.body(null, 204)
  })

  /** §1.2: 200 when it was running, 201 when it was resumed. */
  async function connectReply(team: Team, param: string, timeoutS: number) {
    const { sandbox, resumed } = await service.connect(team, sandboxIDFromPath(param), timeoutS)
    return Response.json(sandboxReply(sandbox), { status: resumed ? 201 : 200 })
  }

  return app
}

/** `state=running,paused` (§1.1 arrays are comma-joined); default both. */
function parseStates(value: string | undefined): SandboxState[] {
  if (value === undefined || value === '') return ['running', 'paused']
  return value.split(',').map((state) => {
    if (state !== 'running' && state !== 'paused')
      throw apiErrors.validation(`invalid state '${state}'`)
    return state
  })
}

/** §1.1: a query string of pairs whose keys and values the SDK URL-encoded once more. */
function parseMetadata(value: string | undefined): Record<string, string> | undefined {
  if (value === undefined || value === '') return undefined
  const pairs: Record<string, string> = {}
  for (const [key, pairValue] of new URLSearchParams(value))
    pairs[decodeURIComponent(key)] = decodeURIComponent(pairValue)
  return pairs
}

/** §1.1: `limit` is 1..100, default 100. */
function parseLimit(value: string | undefined): number {
  if (value === undefined) return 100
  const limit = Number(value)
  if (limit < 1 || limit > 100) throw apiErrors.validation('limit must be between 1 and 100')
  return limit
}
