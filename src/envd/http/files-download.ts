import type { Stats } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import path from 'node:path'
import { pipeline, Readable } from 'node:stream'
import { constants, createGzip } from 'node:zlib'
import type { Context } from 'hono'
import type { EnvdContext } from '../context.js'
import { assertMayAccess } from '../fs/access-check.js'
import type { OsUser } from '../users.js'
import { parseByteRange } from './byte-range.js'
import { NO_ACCEPTABLE_ENCODING, negotiateEncoding } from './content-coding.js'
import { inlineContentDisposition } from './content-disposition.js'
import { httpErrorFromFsError } from './file-errors.js'
import { authorizeFileRequest } from './files-auth.js'
import { HttpError } from './http-error.js'
import { httpUser } from './http-user.js'

/** Read size: 1 MiB chunks keep per-chunk overhead (stream hops, socket writes) small. */
const CHUNK_BYTES = 1024 * 1024

/**
 * `GET /files` (wire contract §3.3): streams one file. gzip when the client accepts it;
 * identity, with `Range` and `If-Modified-Since`, otherwise or whenever the request is a
 * range or conditional one (envd serves those uncompressed, as `http.ServeContent`).
 */
export async function downloadFile(c: Context, ctx: EnvdContext): Promise<Response> {
  authorizeFileRequest(c, ctx.state, 'read')
  const { user, resolvePath } = await httpUser(ctx, c.req.query('username'))
  const target = resolvePath(c.req.query('path') ?? '')
  const info = await readableFile(target, user)
  const negotiated = negotiateEncoding(c.req.header('accept-encoding'))
  if (negotiated === undefined) throw new HttpError(406, NO_ACCEPTABLE_ENCODING)
  const conditional = ['range', 'if-modified-since', 'if-none-match', 'if-range'].some(
    (name) => c.req.header(name) !== undefined,
  )
  c.header('content-type', 'application/octet-stream')
  c.header('content-disposition', inlineContentDisposition(path.basename(target)))
  c.header('vary', 'Accept-Encoding')
  if (negotiated === 'gzip' && !conditional) {
    c.header('content-encoding', 'gzip')
    // Fastest level: the wire does not fix one, and downloads should run at disk speed.
    const gzip = createGzip({ level: constants.Z_BEST_SPEED })
    return c.body(Readable.toWeb(pipeline(await fileStream(target), gzip, () => undefined)))
  }
  return identityResponse(c, target, info)
}

/** Stats `target` and checks the user may read it: a regular file, present, permitted. */
async function readableFile(target: string, user: OsUser): Promise<Stats> {
  try {
    const info = await stat(target)
    if (info.isDirectory()) throw new HttpError(400, `path '${target}' is a directory`)
    if (!info.isFile()) throw new HttpError(400, `path '${target}' is not a regular file`)
    await assertMayAccess(target, user, 'read')
    return info
  } catch (error) {
    throw httpErrorFromFsError(error, target)
  }
}

/** The whole file or one range of it, with HTTP's validators (RFC 9110 §13, §14). */
async function identityResponse(c: Context, target: string, info: Stats): Promise<Response> {
  const lastModified = new Date(Math.floor(info.mtimeMs / 1000) * 1000)
  c.header('last-modified', lastModified.toUTCString())
  c.header('accept-ranges', 'bytes')
  const since = Date.parse(c.req.header('if-modified-since') ?? '')
  if (c.req.header('range') === undefined && lastModified.getTime() <= since) {
    return c.body(null, 304)
  }
  const ifRange = c.req.header('if-range')
  const rangeApplies = ifRange === undefined || Date.parse(ifRange) === lastModified.getTime()
  const range = rangeApplies ? parseByteRange(c.req.header('range'), info.size) : undefined
  if (range === 'unsatisfiable') {
    c.header('content-range', `bytes */${info.size}`)
    throw new HttpError(416, `range not satisfiable for a file of ${info.size} bytes`)
  }
  if (range === undefined) {
    c.header('content-length', String(info.size))
    return c.body(Readable.toWeb(await fileStream(target)))
  }
  c.header('content-range', `bytes ${range.start}-${range.end}/${info.size}`)
  c.header('content-length', String(range.end - range.start + 1))
  return c.body(Readable.toWeb(await fileStream(target, range.start, range.end)), 206)
}

async function fileStream(target: string, start?: number, end?: number): Promise<Readable> {
  const handle = await open(target, 'r').catch((error: unknown) => {
    throw httpErrorFromFsError(error, target)
  })
  return handle.createReadStream({ start, end, highWaterMark: CHUNK_BYTES })
}
