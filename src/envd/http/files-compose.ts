import { closeSync, constants, createReadStream, fstatSync, openSync, unlinkSync } from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'
import * as z from 'zod/mini'
import { errnoCode } from '../../errno-code.js'
import type { EnvdContext } from '../context.js'
import { deniedAs } from '../fs/access-check.js'
import { asUser } from '../fs/as-user.js'
import type { OsUser } from '../users.js'
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
 * destination and moved into place, so a failure leaves the destination as it was. Sources are
 * opened, and deleted, with the user's credentials; their bytes are read through those opens.
 */
export async function composeFiles(exchange: HttpExchange, ctx: EnvdContext): Promise<void> {
  const request = composeSchema.safeParse(await jsonBody(exchange))
  if (!request.success) {
    throw new HttpError(400, `invalid request body: ${z.prettifyError(request.error)}`)
  }
  const { source_paths: sourcePaths, destination, username } = request.data
  const { user, resolvePath } = await httpUser(ctx, username)
  const target = resolvePath(destination)
  const sources: { path: string; fd: number }[] = []
  try {
    for (const requested of sourcePaths) {
      const source = resolvePath(requested)
      if (source === target) {
        throw new HttpError(400, `source path '${requested}' cannot be the same as destination`)
      }
      sources.push({ path: source, fd: openSource(source, requested, user) })
    }
    const content = Readable.from(concatenate(sources.map(({ fd }) => fd)))
    const staged = await stageFile(target, user, content, {}).catch((error: unknown) => {
      throw httpErrorFromFsError(error, target)
    })
    try {
      staged.commit()
    } catch (error) {
      staged.discard()
      throw error
    }
  } finally {
    for (const { fd } of sources) closeSync(fd)
  }
  // Deleting each source is the user's to do; one the user may not delete stays.
  asUser(user, () => {
    for (const source of sources) {
      try {
        unlinkSync(source.path)
      } catch {
        // Gone already, or not the user's to delete.
      }
    }
  })
  exchange.json({ path: target, name: path.basename(target), type: 'file' })
}

/** Opens one source for reading with the user's credentials: present, a regular file, readable. */
function openSource(source: string, requested: string, user: OsUser): number {
  const fd = asUser(user, () => {
    try {
      return openSync(source, constants.O_RDONLY | constants.O_NONBLOCK)
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') {
        throw new HttpError(404, `source file not found: ${requested}`)
      }
      throw httpErrorFromFsError(deniedAs(error, source, 'read'), source)
    }
  })
  if (!fstatSync(fd).isFile()) {
    closeSync(fd)
    throw new HttpError(400, `source path is not a regular file: ${requested}`)
  }
  return fd
}

async function jsonBody(exchange: HttpExchange): Promise<unknown> {
  const text = await exchange.text()
  try {
    return JSON.parse(text)
  } catch {
    throw new HttpError(400, 'invalid request body: not JSON')
  }
}

/** The sources' bytes one after another, read a chunk at a time from each start. */
async function* concatenate(fds: readonly number[]): AsyncGenerator<Buffer> {
  for (const fd of fds) {
    for await (const chunk of createReadStream('', { fd, start: 0, autoClose: false })) {
      if (Buffer.isBuffer(chunk)) yield chunk
    }
  }
}
