import { Hono } from 'hono'
import type { AuthEnv } from '../auth.js'
import { assignTagsSchema, deleteTagsSchema } from '../schemas/template-requests.js'
import { jsonBody } from '../schemas/validate.js'
import type { TemplateService } from '../template-service.js'
import { tagReply } from '../template-views.js'

/**
 * Tags and aliases (wire contract §1.2, §1.4). Mounted before the `/templates/{templateID}`
 * routes, which `/templates/tags` and `/templates/aliases/...` would otherwise match.
 */
export function templateTagRoutes(service: TemplateService) {
  const app = new Hono<AuthEnv>()

  app.post('/templates/tags', jsonBody(assignTagsSchema), async (c) => {
    const { target, tags } = c.req.valid('json')
    return c.json(await service.assignTags(c.get('team'), target, tags), 201)
  })

  app.delete('/templates/tags', jsonBody(deleteTagsSchema), async (c) => {
    const { name, tags } = c.req.valid('json')
    await service.removeTags(c.get('team'), name, tags)
    return c.body(null, 204)
  })

  app.get('/templates/aliases/:alias', async (c) => {
    const template = await service.alias(c.get('team'), c.req.param('alias'))
    return c.json({ templateID: template.templateID, public: template.public })
  })

  app.get('/templates/:templateID/tags', async (c) => {
    const tags = await service.listTags(c.get('team'), c.req.param('templateID'))
    return c.json(tags.map(tagReply))
  })

  return app
}
