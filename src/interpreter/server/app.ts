import { Hono } from 'hono'
import { cors } from 'hono/cors'
import { z } from 'zod'
import type { Logger } from '../../logger.js'
import { normaliseLanguage } from '../kernels/language.js'
import type { Context } from './context.js'
import type { Contexts } from './contexts.js'
import { abortedEvent, executionStream, wireEvent } from './execution-stream.js'
import { fetchSandboxEnvs } from './sandbox-envs.js'

const executeSchema = z.object({
  code: z.string(),
  context_id: z.string().nullish(),
  language: z.string().nullish(),
  env_vars: z.record(z.string(), z.string()).nullish(),
})

const createContextSchema = z.object({
  language: z.string().nullish(),
  cwd: z.string().nullish(),
})

export interface InterpreterAppOptions {
  contexts: Contexts
  /** envd's base URL, whose `/envs` holds the sandbox-level env vars. */
  envdUrl: string
  keepaliveMs: number
  logger: Logger
}

/** FastAPI's `422` shape, which the Python SDK shows as is. */
const validationError = (error: z.ZodError) => ({
  detail: error.issues.map((issue) => ({ loc: ['body', ...issue.path], msg: issue.message })),
})

async function jsonBody(request: Request): Promise<unknown> {
  try {
    return await request.json()
  } catch {
    return undefined
  }
}

/** The interpreter's routes (wire contract §1.2); error bodies are plain text. */
export function createInterpreterApp(options: InterpreterAppOptions): Hono {
  const { contexts, logger } = options
  const app = new Hono()
  app.use(cors())

  app.get('/health', (c) => c.json('OK'))

  app.post('/execute', async (c) => {
    const parsed = executeSchema.safeParse(await jsonBody(c.req.raw))
    if (!parsed.success) return c.json(validationError(parsed.error), 422)
    const { code, context_id: contextId, language, env_vars: envVars } = parsed.data
    if (contextId != null && language != null) {
      return c.text('Only one of context_id or language can be provided', 400)
    }
    let context: Context | undefined
    if (contextId != null) {
      context = contexts.get(contextId)
      if (context === undefined) return c.text(`Context ${contextId} not found`, 404)
    } else {
      try {
        context = await contexts.defaultFor(normaliseLanguage(language))
      } catch (error) {
        return c.text(error instanceof Error ? error.message : String(error), 500)
      }
    }
    const accessToken = c.req.header('X-Access-Token')
    const target = context
    const body = executionStream(options.keepaliveMs, async (send, signal) => {
      const status = await target.run({
        code,
        envVars: envVars ?? {},
        sandboxEnvs: () => fetchSandboxEnvs(options.envdUrl, accessToken, logger),
        onEvent: (event) => {
          const line = wireEvent(event)
          if (line !== undefined) send(line)
        },
        signal,
      })
      if (status === 'abort') send(abortedEvent)
    })
    return new Response(body, { headers: { 'Content-Type': 'application/x-ndjson' } })
  })

  app.post('/contexts', async (c) => {
    const parsed = createContextSchema.safeParse(await jsonBody(c.req.raw))
    if (!parsed.success) return c.json(validationError(parsed.error), 422)
    try {
      const context = await contexts.create(
        normaliseLanguage(parsed.data.language),
        parsed.data.cwd ?? contexts.defaultCwd,
      )
      return c.json(context.info)
    } catch (error) {
      return c.text(error instanceof Error ? error.message : String(error), 500)
    }
  })

  app.get('/contexts', (c) => c.json(contexts.list().map((context) => context.info)))

  app.post('/contexts/:id/restart', async (c) => {
    const id = c.req.param('id')
    const context = contexts.get(id)
    if (context === undefined) return c.text(`Context ${id} not found`, 404)
    try {
      await context.restart()
    } catch (error) {
      logger.error({ error, contextId: id }, 'context restart failed')
      return c.text(`Failed to restart context ${id}`, 500)
    }
    return c.json(null)
  })

  app.delete('/contexts/:id', async (c) => {
    const id = c.req.param('id')
    const context = contexts.get(id)
    if (context === undefined) return c.text(`Context ${id} not found`, 404)
    try {
      await contexts.remove(context)
    } catch (error) {
      logger.error({ error, contextId: id }, 'context removal failed')
      return c.text(`Failed to remove context ${id}`, 500)
    }
    return c.json(null)
  })

  return app
}
