import { Hono } from 'hono'
import type { AuthEnv } from '../auth.js'
import { sandboxIDFromPath } from '../sandbox-ids.js'
import type { SandboxService } from '../sandbox-service.js'
import { changesQuerySchema } from '../schemas/sandbox-requests.js'
import { queryParams } from '../schemas/validate.js'

/**
 * `GET /sandboxes/{id}/changes`, a Sandbar extension (README): what a sandbox changed against
 * its template, as JSON `{changes: [{path, kind, type}]}`, or with `?format=tar` as a tar
 * stream in OCI layer form (whiteouts for deletions), so an agent's work can be reviewed or
 * extracted without listing the whole tree.
 */
export function sandboxChangesRoutes(service: SandboxService) {
  const app = new Hono<AuthEnv>()

  app.get('/sandboxes/:sandboxID/changes', queryParams(changesQuerySchema), async (c) => {
    const sandboxID = sandboxIDFromPath(c.req.param('sandboxID'))
    if (c.req.valid('query').format === 'tar') {
      const archive = await service.changesArchive(c.get('team'), sandboxID)
      return c.body(webStream(archive), 200, { 'content-type': 'application/x-tar' })
    }
    return c.json({ changes: await service.changes(c.get('team'), sandboxID) })
  })

  return app
}

/**
 * A web stream of `source`'s chunks, pulled as the client reads; a client that goes away
 * cancels it, which ends `source`.
 */
function webStream(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const chunks = source[Symbol.asyncIterator]()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await chunks.next()
        if (done === true) controller.close()
        else controller.enqueue(value)
      } catch (error) {
        controller.error(error)
      }
    },
    async cancel() {
      await chunks.return?.().catch(() => undefined)
    },
  })
}
