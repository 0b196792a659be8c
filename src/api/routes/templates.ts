import { Hono } from 'hono'
import type { AuthEnv } from '../auth.js'
import {
  pageQuerySchema,
  templateRequestV2Schema,
  templateRequestV3Schema,
  templateUpdateSchema,
} from '../schemas/template-requests.js'
import { jsonBody, queryParams } from '../schemas/validate.js'
import { pageForQuery } from '../template-pages.js'
import type { TemplateService } from '../template-service.js'
import {
  templateLegacy,
  templateListItem,
  templateRequestReply,
  templateWithBuilds,
} from '../template-views.js'

/** The template resource routes of wire contract §1.2: register, list, get, update, delete. */
export function templateRoutes(service: TemplateService) {
  const app = new Hono<AuthEnv>()

  app.post('/v3/templates', jsonBody(templateRequestV3Schema), async (c) => {
    const body = c.req.valid('json')
    const { entry, build } = await service.builds.register(c.get('team'), {
      ...body,
      name: body.name ?? body.alias,
    })
    return c.json(templateRequestReply(entry, build), 202)
  })

  // Deprecated: the same registration, answered as §1.3 TemplateLegacy.
  app.post('/v2/templates', jsonBody(templateRequestV2Schema), async (c) => {
    const body = c.req.valid('json')
    const { entry, build } = await service.builds.register(c.get('team'), {
      ...body,
      name: body.alias,
    })
    const { buildID, cpuCount, memoryMB, diskSizeMB } = build
    // The new build's, not the newest ready one's a list shows.
    return c.json({ ...templateLegacy(entry), buildID, cpuCount, memoryMB, diskSizeMB }, 202)
  })

  app.get('/templates', async (c) => {
    const entries = await service.list(c.get('team'))
    return c.json(entries.map(templateListItem))
  })

  app.get('/v2/templates', queryParams(pageQuerySchema), async (c) => {
    const entries = await service.list(c.get('team'))
    const page = pageForQuery(
      c,
      entries,
      (entry) => entry.template.templateID,
      c.req.valid('query'),
    )
    return c.json(page.map(templateListItem))
  })

  app.get('/templates/:templateID', queryParams(pageQuerySchema), async (c) => {
    const entry = await service.get(c.get('team'), c.req.param('templateID'))
    const page = pageForQuery(c, entry.builds, (build) => build.buildID, c.req.valid('query'))
    return c.json(templateWithBuilds(entry, page))
  })

  app.delete('/templates/:templateID', async (c) => {
    await service.delete(c.get('team'), c.req.param('templateID'))
    return c.body(null, 204)
  })

  // §1.4: infra answers the deprecated update with a JSON `null` body.
  app.patch('/templates/:templateID', jsonBody(templateUpdateSchema), async (c) => {
    await service.update(c.get('team'), c.req.param('templateID'), c.req.valid('json'))
    return c.json(null)
  })

  app.patch('/v2/templates/:templateID', jsonBody(templateUpdateSchema), async (c) => {
    const entry = await service.update(
      c.get('team'),
      c.req.param('templateID'),
      c.req.valid('json'),
    )
    return c.json({ names: templateListItem(entry).names })
  })

  return app
}
