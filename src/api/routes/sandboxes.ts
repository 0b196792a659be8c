import { Hono } from 'hono'
import type { AuthEnv } from '../auth.js'
import { sandboxIDFromPath } from '../sandbox-ids.js'
import type { SandboxService } from '../sandbox-service.js'
import { sandboxDetail, sandboxReply } from '../sandbox-views.js'
import { networkUpdateSchema, newSandboxSchema } from '../schemas/sandbox-requests.js'
import { jsonBody } from '../schemas/validate.js'

/**
 * The sandbox resource routes of wire contract §1.2: create, get, delete, network. `domain` is
 * the sandbox domain the replies carry (sandbox-views.ts).
 */
export function sandboxRoutes(service: SandboxService, domain: string) {
  const app = new Hono<AuthEnv>()

  app.post('/sandboxes', jsonBody(newSandboxSchema), async (c) => {
    const sandbox = await service.create(c.get('team'), c.req.valid('json'), 'v1')
    return c.json(sandboxReply(sandbox, domain), 201)
  })

  app.post('/v2/sandboxes', jsonBody(newSandboxSchema), async (c) => {
    const sandbox = await service.create(c.get('team'), c.req.valid('json'), 'v2')
    return c.json(sandboxReply(sandbox, domain), 201)
  })

  app.get('/sandboxes/:sandboxID', async (c) => {
    const sandbox = await service.get(c.get('team'), sandboxIDFromPath(c.req.param('sandboxID')))
    return c.json(sandboxDetail(sandbox, domain, await service.pausedTierOf(sandbox)))
  })

  app.delete('/sandboxes/:sandboxID', async (c) => {
    const sandboxID = sandboxIDFromPath(c.req.param('sandboxID'))
    await service.kill(c.get('team'), sandboxID)
    return c.body(null, 204)
  })

  app.put('/sandboxes/:sandboxID/network', jsonBody(networkUpdateSchema), async (c) => {
    const sandboxID = sandboxIDFromPath(c.req.param('sandboxID'))
    await service.updateNetwork(c.get('team'), sandboxID, c.req.valid('json'))
    return c.body(null, 204)
  })

  return app
}
