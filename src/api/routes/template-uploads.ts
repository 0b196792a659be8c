import { Hono } from 'hono'
import type { TemplateUploads } from '../template-uploads.js'

/**
 * The upload URL `GET /templates/{t}/files/{hash}` hands out (§2.1 step 2): a PUT to the same
 * path, signed. The SDK sends it without the API key, as it would to S3, so it is mounted before
 * authentication, and before the API's body limit, since archives are larger (its own cap).
 */
export function templateUploadRoutes(uploads: TemplateUploads) {
  const app = new Hono()
  app.put('/templates/:templateID/files/:hash', async (c) => {
    await uploads.accept({
      templateID: c.req.param('templateID'),
      hash: c.req.param('hash'),
      expires: c.req.query('expires'),
      signature: c.req.query('signature'),
      contentLength: c.req.header('content-length'),
      chunked: (c.req.header('transfer-encoding') ?? '').toLowerCase().includes('chunked'),
      body: chunksOf(c.req.raw.body),
    })
    return c.body(null, 200)
  })
  return app
}

async function* chunksOf(body: ReadableStream<Uint8Array> | null): AsyncIterable<Uint8Array> {
  if (body === null) return
  const reader = body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      yield value
    }
  } finally {
    reader.releaseLock()
  }
}
