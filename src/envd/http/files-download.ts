import {
  closeSync,
  createReadStream,
  constants as fsConstants,
  fstatSync,
  openSync,
  type Stats,
} from 'node:fs'
import path from 'node:path'
import { pipeline, type Readable } from 'node:stream'
import { constants, createGzip } from 'node:zlib'
import type { EnvdContext } from '../context.js'
import { deniedAs } from '../fs/access-check.js'
import { asUser } from '../fs/as-user.js'
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
  const file = openReadable(target, user)
  // The one stream the reply sends takes the descriptor over and closes it; else it closes here.
  let handedOver = false
  const stream = (start?: number, end?: number): Readable => {
    handedOver = true
    return createReadStream('', { fd: file.fd, start, end, highWaterMark: CHUNK_BYTES })
  }
  try {
    await sendFile(exchange, target, file.info, stream)
  } finally {
    if (!handedOver) closeSync(file.fd)
  }
}

type FileStream = (start?: number, end?: number) => Readable

async function sendFile(
  exchange: HttpExchange,
  target: string,
  info: Stats,
  fileStream: FileStream,
): Promise<void> {
  const negotiated = negotiateEncoding(exchange.header('accept-encoding'))
  if (negotiated === undefined) throw new HttpError(406, NO_ACCEPTABLE_ENCODING)
  const conditional = ['range', 'if-modified-since', 'if-none-match', 'if-range'].some(
    (name) => exchange.header(name) !== undefined,
  )
  exchange.setHeader('content-type', 'application/octet-stream')
  exchange.setHeader('content-disposition', inlineContentDisposition(path.basename(target)))
  exchange.setHeader('vary', 'Accept-Encoding')
  if (negotiated === 'gzip' && !conditional) {
    const content = fileStream()
    exchange.setHeader('content-encoding', 'gzip')
    // Fastest level: the wire does not fix one, and downloads should run at disk speed.
    const gzip = createGzip({ level: constants.Z_BEST_SPEED })
    // A read error travels down the pipeline to the gzip stream and cuts the reply.
    await exchange.stream(pipeline(content, gzip, () => undefined))
    return
  }
  await sendIdentity(exchange, info, fileStream)
}

/**
 * Opens `target` for reading with the user's credentials: a regular file, present, permitted
 * all along its path. Non-blocking, so a FIFO answers `400` instead of hanging the open.
 */
function openReadable(target: string, user: OsUser): { fd: number; info: Stats } {
  let fd: number | undefined
  try {
    fd = asUser(user, () => {
      try {
        return openSync(target, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK)
      } catch (error) {
        throw deniedAs(error, target, 'read')
      }
    })
    const info = fstatSync(fd)
    if (info.isDirectory()) throw new HttpError(400, `path '${target}' is a directory`)
    if (!info.isFile()) throw new HttpError(400, `path '${target}' is not a regular file`)
    return { fd, info }
  } catch (error) {
    if (fd !== undefined) closeSync(fd)
    throw httpErrorFromFsError(error, target)
  }
}

/** The whole file or one range of it, with HTTP's validators (RFC 9110 §13, §14). */
async function sendIdentity(
  exchange: HttpExchange,
  info: Stats,
  fileStream: FileStream,
): Promise<void> {
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
    await exchange.stream(fileStream())
    return
  }
  exchange.setHeader('content-range', `bytes ${range.start}-${range.end}/${info.size}`)
  exchange.setHeader('content-length', String(range.end - range.start + 1))
  await exchange.stream(fileStream(range.start, range.end), 206)
}
