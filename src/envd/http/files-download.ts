import type { Stats } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import path from 'node:path'
import { pipeline, type Readable } from 'node:stream'
import { constants, createGzip } from 'node:zlib'
import type { EnvdContext } from '../context.js'
import { assertMayAccess } from '../fs/access-check.js'
import type { OsUser } from '../users.js'
import { parseByteRange } from './byte-range.js'
import { NO_ACCEPTABLE_ENCODING, negotiateEncoding } from './content-coding.js'
import { inlineContentDisposition } from './content-disposition.js'
import { httpErrorFromFsError } from './file-errors.js'
import { authorizeFileRequest } from './files-auth.js'
import { HttpError } from './http-error.js'
import type { HttpExchange } from './http-exchange.js'
import { httpUser } from './http-user.js'

/** Read size: 1 MiB chunks keep per-chunk overhead (stream hops, socket writes) small. */
const CHUNK_BYTES = 1024 * 1024

/**
 * `GET /files` (wire contract §3.3): streams one file. gzip when the client accepts it;
 * identity, with `Range` and `If-Modified-Since`, otherwise or whenever the request is a
 * range or conditional one (envd serves those uncompressed, as `http.ServeContent`).
 */
export async function downloadFile(exchange: HttpExchange, ctx: EnvdContext): Promise<void> {
  authorizeFileRequest(exchange, ctx.state, 'read')
  const { user, resolvePath } = await httpUser(ctx, exchange.query('username'))
  const target = resolvePath(exchange.query('path') ?? '')
  const info = await readableFile(target, user)
  const negotiated = negotiateEncoding(exchange.header('accept-encoding'))
  if (negotiated === undefined) throw new HttpError(406, NO_ACCEPTABLE_ENCODING)
  const conditional = ['range', 'if-modified-since', 'if-none-match', 'if-range'].some(
    (name) => exchange.header(name) !== undefined,
  )
  exchange.setHeader('content-type', 'application/octet-stream')
  exchange.setHeader('content-disposition', inlineContentDisposition(path.basename(target)))
  exchange.setHeader('vary', 'Accept-Encoding')
  if (negotiated === 'gzip' && !conditional) {
    const content = await fileStream(target)
    exchange.setHeader('content-encoding', 'gzip')
    // Fastest level: the wire does not fix one, and downloads should run at disk speed.
    const gzip = createGzip({ level: constants.Z_BEST_SPEED })
    // A read error travels down the pipeline to the gzip stream and cuts the reply.
    await exchange.stream(pipeline(content, gzip, () => undefined))
    return
  }
  await sendIdentity(exchange, target, info)
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
async function sendIdentity(exchange: HttpExchange, target: string, info: Stats): Promise<void> {
  const lastModified = new Date(Math.floor(info.mtimeMs / 1000) * 1000)
  exchange.setHeader('last-modified', lastModified.toUTCString())
  exchange.setHeader('accept-ranges', 'bytes')
  const since = Date.parse(exchange.header('if-modified-since') ?? '')
  if (exchange.header('range') === undefined && lastModified.getTime() <= since) {
    exchange.empty(304)
    return
  }
  const ifRange = exchange.header('if-range')
  const rangeApplies = ifRange === undefined || Date.parse(ifRange) === lastModified.getTime()
  const range = rangeApplies ? parseByteRange(exchange.header('range'), info.size) : undefined
  if (range === 'unsatisfiable') {
    exchange.setHeader('content-range', `bytes */${info.size}`)
    throw new HttpError(416, `range not satisfiable for a file of ${info.size} bytes`)
  }
  if (range === undefined) {
    exchange.setHeader('content-length', String(info.size))
    await exchange.stream(await fileStream(target))
    return
  }
  exchange.setHeader('content-range', `bytes ${range.start}-${range.end}/${info.size}`)
  exchange.setHeader('content-length', String(range.end - range.start + 1))
  await exchange.stream(await fileStream(target, range.start, range.end), 206)
}

async function fileStream(target: string, start?: number, end?: number): Promise<Readable> {
  const handle = await open(target, 'r').catch((error: unknown) => {
    throw httpErrorFromFsError(error, target)
  })
  return handle.createReadStream({ start, end, highWaterMark: CHUNK_BYTES })
}
