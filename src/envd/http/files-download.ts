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
import { readAt } from '../fs/read-at.js'
import type { OsUser } from '../users.js'
import { type ByteRange, parseByteRange } from './byte-range.js'
import { NO_ACCEPTABLE_ENCODING, negotiateEncoding } from './content-coding.js'
import { inlineContentDisposition } from './content-disposition.js'
import { httpErrorFromFsError } from './file-errors.js'
import { authorizeFileRequest } from './files-auth.js'
import { HttpError } from './http-error.js'
import type { HttpExchange } from './http-exchange.js'
import { httpUser } from './http-user.js'

/** Read size: 1 MiB chunks keep per-chunk overhead (stream hops, socket writes) small. */
const CHUNK_BYTES = 1024 * 1024
/** Read size for a file that may grow while it streams to its end: node's default. */
const MIN_CHUNK_BYTES = 64 * 1024
/**
 * Up to this many bytes are read in one call and sent in one write. Streamed, a 5-byte file
 * cost envd 0.50 ms of CPU (the stream, its pipeline, a thread-pool round trip to read and
 * one to close); read whole, 0.23 ms.
 */
const WHOLE_READ_BYTES = 64 * 1024

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
  const content: FileContent = {
    info: file.info,
    stream: (range) => {
      handedOver = true
      // Each read allocates a buffer of the read size: a small file gets one its size, where
      // 1 MiB buffers for 5-byte reads made garbage collection most of envd's work on them.
      const size = range === undefined ? Math.max(file.info.size, MIN_CHUNK_BYTES) : length(range)
      const highWaterMark = Math.min(CHUNK_BYTES, size)
      return createReadStream('', { fd: file.fd, ...range, highWaterMark })
    },
    read: (range) => readAt(file.fd, length(range), range.start),
  }
  try {
    await sendFile(exchange, target, content)
  } finally {
    if (!handedOver) closeSync(file.fd)
  }
}

/** An open file and the two ways its bytes leave. */
interface FileContent {
  info: Stats
  /** From `range.start` to `range.end` inclusive, or to the end of the file (which may grow). */
  stream(range?: ByteRange): Readable
  /** The range, read at once; shorter if the file has shrunk. */
  read(range: ByteRange): Buffer
}

function length(range: ByteRange): number {
  return range.end - range.start + 1
}

async function sendFile(
  exchange: HttpExchange,
  target: string,
  content: FileContent,
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
    const stream = content.stream()
    exchange.setHeader('content-encoding', 'gzip')
    // Fastest level: the wire does not fix one, and downloads should run at disk speed.
    const gzip = createGzip({ level: constants.Z_BEST_SPEED })
    // A read error travels down the pipeline to the gzip stream and cuts the reply.
    await exchange.stream(pipeline(stream, gzip, () => undefined))
    return
  }
  await sendIdentity(exchange, content)
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
async function sendIdentity(exchange: HttpExchange, content: FileContent): Promise<void> {
  const { info } = content
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
    // Exactly the bytes the length announces, should the file grow meanwhile.
    await sendBytes(exchange, content, { start: 0, end: info.size - 1 }, 200)
    return
  }
  exchange.setHeader('content-range', `bytes ${range.start}-${range.end}/${info.size}`)
  await sendBytes(exchange, content, range, 206)
}

async function sendBytes(
  exchange: HttpExchange,
  content: FileContent,
  range: ByteRange,
  status: number,
): Promise<void> {
  const count = length(range)
  exchange.setHeader('content-length', String(count))
  if (count > WHOLE_READ_BYTES) {
    await exchange.stream(content.stream(range), status)
    return
  }
  const bytes = content.read(range)
  // A file that shrank since it was opened cannot fill the announced length: cut the reply.
  if (bytes.length < count) exchange.response.destroy()
  else exchange.send(bytes, status)
}
