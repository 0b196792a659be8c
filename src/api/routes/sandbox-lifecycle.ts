import { Hono } from 'hono'
import type { Team } from '../../store/index.js'
import type { AuthEnv } from '../auth.js'
import { apiErrors } from '../errors.js'
import { sandboxIDFromPath } from '../sandbox-ids.js'
import { REFRESH_MIN_S, type SandboxService } from '../sandbox-service.js'
import { sandboxReply } from '../sandbox-views.js'
import {
  connectSchema,
  pauseSchema,
  refreshSchema,
  resumeSchema,
  timeoutSchema,
} from '../schemas/sandbox-requests.js'
import { jsonBody } from '../schemas/validate.js'

/** SDK default when connect names no timeout (§4.2: "connect resets to 5 min"). */
const CONNECT_DEFAULT_TIMEOUT_S = 300
/** §1.3 ResumedSandbox: `timeout` default 15 s. */
const RESUME_DEFAULT_TIMEOUT_S = 15

/**
 * The state and TTL routes of wire contract §1.2 and §1.4: pause, resume, connect, timeouts.
 * `domain` is the sandbox domain the replies carry (sandbox-views.ts).
 */
export function sandboxLifecycleRoutes(service: SandboxService, domain: string) {
  const app = new Hono<AuthEnv>()

  app.post('/sandboxes/:sandboxID/pause', jsonBody(pauseSchema), async (c) => {
    const { memory } = c.req.valid('json')
    const sandboxID = sandboxIDFromPath(c.req.param('sandboxID'))
    await service.pause(c.get('team'), sandboxID, { keepMemory: memory ?? true })
    return c.body(null, 204)
  })

  app.post('/sandboxes/:sandboxID/connect', jsonBody(connectSchema), async (c) => {
    const { timeout, memory } = c.req.valid('json')
    // §1.3 ConnectSandbox: `timeout` is required in v1.
    if (timeout === undefined) throw apiErrors.validation('timeout is required')
    return connectReply(c.get('team'), c.req.param('sandboxID'), timeout, memory)
  })

  app.post('/v2/sandboxes/:sandboxID/connect', jsonBody(connectSchema), async (c) => {
    const { timeout, memory } = c.req.valid('json')
    return connectReply(
      c.get('team'),
      c.req.param('sandboxID'),
      timeout ?? CONNECT_DEFAULT_TIMEOUT_S,
      memory,
    )
  })

  app.post('/sandboxes/:sandboxID/timeout', jsonBody(timeoutSchema), async (c) => {
    const { timeout } = c.req.valid('json')
    await service.setTimeout(c.get('team'), sandboxIDFromPath(c.req.param('sandboxID')), timeout)
    return c.body(null, 204)
  })

  app.post('/sandboxes/:sandboxID/refreshes', jsonBody(refreshSchema), async (c) => {
    const { duration } = c.req.valid('json')
    const sandboxID = sandboxIDFromPath(c.req.param('sandboxID'))
    await service.refresh(c.get('team'), sandboxID, duration ?? REFRESH_MIN_S)
    return c.body(null, 204)
  })

  app.post('/sandboxes/:sandboxID/resume', jsonBody(resumeSchema), async (c) => {
    const { timeout } = c.req.valid('json')
    const sandboxID = sandboxIDFromPath(c.req.param('sandboxID'))
    const sandbox = await service.resumePaused(
      c.get('team'),
      sandboxID,
      timeout ?? RESUME_DEFAULT_TIMEOUT_S,
    )
    return c.json(sandboxReply(sandbox, domain), 201)
  })

  /**
   * §1.2: 200 when it was running, 201 when it was resumed; `memory: false` (the SDK's
   * `onResume: 'reboot'`) boots a paused sandbox over its files instead of restoring it.
   */
  async function connectReply(
    team: Team,
    param: string,
    timeoutS: number,
    memory: boolean | undefined,
  ) {
    const { sandbox, resumed } = await service.connect(team, sandboxIDFromPath(param), timeoutS, {
      reboot: memory === false,
    })
    return Response.json(sandboxReply(sandbox, domain), { status: resumed ? 201 : 200 })
  }

  return app
}
