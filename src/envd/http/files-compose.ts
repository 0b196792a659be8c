import { open, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import * as z from 'zod/mini'
import type { EnvdContext } from '../context.js'
import { assertMayAccess, assertMayCreate } from '../fs/access-check.js'
import { httpErrorFromFsError } from './file-errors.js'
import { HttpError } from './http-error.js'
import type { HttpExchange } from './http-exchange.js'
import { httpUser } from './http-user.js'
import { stageFile } from './staged-file.js'

const composeSchema = z.object({
  source_paths: z.array(z.string()).check(z.minLength(1, 'source_paths must not be empty')),
  destination: z.string().check(z.minLength(1, 'destination is required')),
  username: z.optional(z.string()),
})

/**
 * `POST /files/compose` (wire contract §3.3): concatenates the sources, in order, into the
 * destination (parents created), then deletes the sources. The result is staged beside the
 * destination and moved into place, so a failure leaves the destination as it was.
 */
export async function composeFiles(exchange: HttpExchange, ctx: EnvdContext): Promise<void> {
  const request = composeSchema.safeParse(await jsonBody(exchange))
  if (!request.success) {
    throw new HttpError(400, `invalid request body: ${z.prettifyError(request.error)}`)
  }
  const { source_paths: sourcePaths, destination, username } = request.data
  const { user, resolvePath } = await httpUser(ctx, username)
  const target = resolvePath(destination)
  const sources: string[] = []
  for (const requested of sourcePaths) {
    const source = resolvePath(requested)
    if (source === target) {
      throw new HttpError(400, `source path '${requested}' cannot be the same as destination`)
    }
    const info = await stat(source).catch(() => {
      throw new HttpError(404, `source file not found: ${requested}`)
    })
    if (!info.isFile()) throw new HttpError(400, `source path is not a regular file: ${requested}`)
    // Reading each source, then deleting it, is what the user must be allowed to do.
    await assertMayAccess(source, user, 'read')
      .then(() => assertMayCreate(source, user))
      .catch((error: unknown) => {
        throw httpErrorFromFsError(error, source)
      })
    sources.push(source)
  }
  const staged = await stageFile(target, user, Readable.from(concatenate(sources)), {}).catch(
    (error: unknown) => {
      throw httpErrorFromFsError(error, target)
    },
  )
  await staged.commit().catch(async (error: unknown) => {
    await staged.discard()
    throw httpErrorFromFsError(error, target)
  })
  for (const source of sources) await unlink(source).catch(() => undefined)
  exchange.json({ path: target, name: path.basename(target), type: 'file' })
}

async function jsonBody(exchange: HttpExchange): Promise<unknown> {
  const text = await exchange.text()
  try {
    return JSON.parse(text)
  } catch {
    throw new HttpError(400, 'invalid request body: not JSON')
  }
}

/** The sources' bytes one after another, read a chunk at a time. */
async function* concatenate(sources: readonly string[]): AsyncGenerator<Buffer> {
  for (const source of sources) {
    const handle = await open(source, 'r')
    try {
      for await (const chunk of handle.createReadStream({ autoClose: false })) {
        if (Buffer.isBuffer(chunk)) yield chunk
      }
    } finally {
      await handle.close()
    }
  }
}
