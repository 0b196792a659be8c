import { Readable } from 'node:stream'
import type { ReadableStream as NodeReadableStream } from 'node:stream/web'
import { type Env, Hono, type MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { createMiddleware } from 'hono/factory'
import * as z from 'zod/mini'
import {
  type Agent,
  type VolumeEntry,
  type VolumeFiles,
  VolumePathError,
} from '../../agent/index.js'
import type { Logger } from '../../logger.js'
import type { Store, Volume } from '../../store/index.js'
import {
  contentAttributesSchema,
  contentCreateQuerySchema,
  contentListQuerySchema,
  contentPathQuerySchema,
} from '../schemas/volume-requests.js'
import { ContentError, contentErrorKindOf, contentErrors } from '../volume-content-errors.js'
import { VolumeTokenError, type VolumeTokens } from '../volume-tokens.js'

/** What a content route sees: the token's volume and its files. */
type ContentEnv = { Variables: { volume: Volume; files: VolumeFiles } }

const MAX_DEPTH = 10
/** `PATCH`'s body is three numbers. */
const MAX_ATTRIBUTES_BYTES = 4096
/** How much of a refused upload is read and dropped before its connection is cut instead. */
const MAX_DISCARDED_BYTES = 256 * 1024 * 1024

export interface VolumeContentOptions {
  store: Store
  agent: Agent
  tokens: VolumeTokens
  logger: Logger
}

/**
 * The volume content API (wave2-contracts §2.3) on the API port. Callers carry a volume token
 * (never the API key): it must be valid, for the volume of the path, whose volume is live.
 * File bodies stream both ways; the agent's VolumeFiles keeps every operation inside the volume.
 */
export function volumeContentRoutes(options: VolumeContentOptions) {
  const app = new Hono<ContentEnv>()
  app.use('/volumecontent/:volumeID/*', volumeTokenAuth(options))

  app.get('/volumecontent/:volumeID/path', contentQuery(contentPathQuerySchema), async (c) => {
    return c.json(wireEntry(await c.get('files').stat(c.req.valid('query').path)))
  })

  app.patch(
    '/volumecontent/:volumeID/path',
    contentQuery(contentPathQuerySchema),
    bodyLimit({
      maxSize: MAX_ATTRIBUTES_BYTES,
      onError: () => {
        throw contentErrors.validation(`the body is larger than ${MAX_ATTRIBUTES_BYTES} bytes`)
      },
    }),
    async (c) => {
      const attributes = parse(contentAttributesSchema, await jsonOf(c.req.raw))
      const { mode, ...owner } = attributes
      const entry = await c
        .get('files')
        .setAttributes(c.req.valid('query').path, { ...owner, ...modeOf(mode) })
      return c.json(wireEntry(entry))
    },
  )

  app.delete('/volumecontent/:volumeID/path', contentQuery(contentPathQuerySchema), async (c) => {
    await c.get('files').remove(c.req.valid('query').path)
    return c.body(null, 204)
  })

  app.get('/volumecontent/:volumeID/dir', contentQuery(contentListQuerySchema), async (c) => {
    const { path, depth } = c.req.valid('query')
    const levels = depth === undefined ? 1 : Number(depth)
    if (!/^\d+$/.test(depth ?? '1') || levels < 1 || levels > MAX_DEPTH) throw contentErrors.depth()
    return c.json((await c.get('files').list(path, levels)).map(wireEntry))
  })

  app.post('/volumecontent/:volumeID/dir', contentQuery(contentCreateQuerySchema), async (c) => {
    const { path, force, mode, ...owner } = c.req.valid('query')
    const entry = await c
      .get('files')
      .makeDir(path, { ...owner, ...modeOf(mode), force: force === 'true' })
    return c.json(wireEntry(entry), 201)
  })

  app.get('/volumecontent/:volumeID/file', contentQuery(contentPathQuerySchema), async (c) => {
    const { stream } = await c.get('files').readFile(c.req.valid('query').path)
    // Streamed, never held whole: a client that goes away cancels the read and closes the file.
    return c.body(stream, 200, { 'content-type': 'application/octet-stream' })
  })

  app.put('/volumecontent/:volumeID/file', contentQuery(contentCreateQuerySchema), async (c) => {
    const { path, force, mode, ...owner } = c.req.valid('query')
    const raw = c.req.raw.body
    const body =
      raw === null ? Readable.from([]) : Readable.fromWeb(raw as NodeReadableStream<Uint8Array>)
    try {
      const entry = await c
        .get('files')
        .writeFile(path, body, { ...owner, ...modeOf(mode), force: force === 'true' })
      return c.json(wireEntry(entry), 201)
    } catch (error) {
      await discardRest(body)
      if (error instanceof VolumePathError && error.kind === 'noSpace') {
        throw new ContentError(
          'insufficientStorage',
          `${error.message} (its size limit is ${c.get('volume').sizeMB} MiB)`,
        )
      }
      throw error
    }
  })

  app.onError((error, c) => {
    const known = contentErrorOf(error)
    if (known === undefined) {
      // The cause is logged, never sent (STYLE habit 7).
      options.logger.error({ err: error, method: c.req.method, path: c.req.path }, 'request failed')
    }
    const reply = known ?? contentErrors.internal()
    return c.json(reply.body(), reply.status)
  })
  return app
}

/**
 * Reads what is left of a refused upload's body, so the client, still sending, gets to read
 * the answer instead of a reset connection. Past a bound the connection is cut instead.
 */
function discardRest(body: Readable): Promise<void> {
  return new Promise((resolve) => {
    let discarded = 0
    const done = () => resolve()
    body.on('data', (chunk: Uint8Array) => {
      discarded += chunk.length
      if (discarded > MAX_DISCARDED_BYTES) {
        body.destroy()
        done()
      }
    })
    body.once('end', done)
    body.once('close', done)
    // A client that went away has nothing left to send.
    body.once('error', done)
    body.resume()
  })
}

/** Bearer token → the live volume it is for, which must be the path's (wave2-contracts §2.2). */
function volumeTokenAuth({ store, agent, tokens }: VolumeContentOptions) {
  return createMiddleware<ContentEnv>(async (c, next) => {
    const token = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1]
    if (token === undefined) throw contentErrors.unauthorized('a volume token is required')
    const grant = await tokens.verify(token)
    if (grant.volumeID !== c.req.param('volumeID')) {
      throw contentErrors.unauthorized('the volume token is for another volume')
    }
    const volume = await store.getVolume(grant.volumeID, grant.teamID)
    if (volume === undefined) throw contentErrors.unauthorized('the volume no longer exists')
    c.set('volume', volume)
    c.set('files', agent.volumes.files(volume.volumeID))
    await next()
  })
}

function contentErrorOf(error: unknown): ContentError | undefined {
  if (error instanceof ContentError) return error
  if (error instanceof VolumeTokenError) return contentErrors.unauthorized(error.message)
  if (error instanceof VolumePathError) {
    return new ContentError(contentErrorKindOf[error.kind], error.message)
  }
  return undefined
}

/** The query validator, refusing with the content API's error shape. */
function contentQuery<S extends z.ZodMiniType<object>>(
  schema: S,
): MiddlewareHandler<Env, string, { in: { query: z.input<S> }; out: { query: z.infer<S> } }> {
  return async (c, next) => {
    c.req.addValidatedData('query', parse(schema, c.req.query()))
    await next()
  }
}

function parse<S extends z.ZodMiniType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw contentErrors.validation(z.prettifyError(parsed.error))
  return parsed.data
}

/** An empty body counts as `{}`, as the rest of the API takes it. */
async function jsonOf(request: Request): Promise<unknown> {
  const text = await request.text()
  if (text.trim() === '') return {}
  try {
    return JSON.parse(text)
  } catch {
    throw contentErrors.validation('request body is not valid JSON')
  }
}

/** Permission bits only: the file type bits of a `uint32` mode mean nothing to chmod. */
function modeOf(mode: number | undefined): { mode?: number } {
  return mode === undefined ? {} : { mode: mode & 0o7777 }
}

/** §2.3 `VolumeEntryStat`: times as RFC 3339. */
function wireEntry(entry: VolumeEntry) {
  return {
    ...entry,
    atime: entry.atime.toISOString(),
    mtime: entry.mtime.toISOString(),
    ctime: entry.ctime.toISOString(),
  }
}
