import path from 'node:path'
import { pipeline, type Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'
import type { ActingUser } from '../acting-user.js'
import type { EnvdContext } from '../context.js'
import { requestBodyCoding } from './content-coding.js'
import { httpErrorFromFsError } from './file-errors.js'
import { authorizeFileRequest } from './files-auth.js'
import { HttpError } from './http-error.js'
import type { HttpExchange } from './http-exchange.js'
import { httpUser } from './http-user.js'
import { fileParts, keepErrorForConsumer } from './multipart-parts.js'
import { type StagedFile, stageFile } from './staged-file.js'
import { metadataFromHeaders } from './upload-metadata.js'

/** HTTP `EntryInfo` of an uploaded file (wire contract §3.3). */
export interface UploadedEntry {
  path: string
  name: string
  type: 'file'
  metadata?: Record<string, string>
}

interface Upload {
  user: ActingUser
  metadata: Record<string, string>
  staged: { entry: UploadedEntry; file: StagedFile }[]
}

/**
 * `POST /files` (wire contract §3.3): a raw `application/octet-stream` body to `path`, or the
 * `file` parts of a `multipart/form-data` body, each to `path` or to its own filename. Every
 * file is staged first and moved into place only once the whole body has arrived, so a failed
 * upload leaves none of its files behind.
 */
export async function uploadFiles(exchange: HttpExchange, ctx: EnvdContext): Promise<void> {
  authorizeFileRequest(exchange, ctx.state, 'write')
  const upload: Upload = {
    user: await httpUser(ctx, exchange.query('username')),
    metadata: metadataFromHeaders(exchange.request.headers),
    staged: [],
  }
  const queryPath = exchange.query('path')
  const contentType = exchange.header('content-type') ?? ''
  const mediaType = contentType.split(';')[0]?.trim().toLowerCase()
  try {
    if (mediaType === 'application/octet-stream') {
      if (queryPath === undefined) {
        throw new HttpError(400, 'path query parameter is required for raw body upload')
      }
      await stagePart(upload, queryPath, decodedBody(exchange))
    } else if (mediaType === 'multipart/form-data') {
      for await (const part of fileParts(decodedBody(exchange), contentType)) {
        await stagePart(upload, queryPath ?? part.filename ?? '', part.content)
      }
    } else {
      throw new HttpError(
        400,
        `unsupported content type: ${contentType}, expected multipart/form-data or application/octet-stream`,
      )
    }
    for (const { file } of upload.staged) file.commit()
  } catch (error) {
    for (const { file } of upload.staged.reverse()) file.discard()
    throw error
  }
  exchange.json(upload.staged.map(({ entry }) => entry))
}

async function stagePart(upload: Upload, requested: string, content: Readable): Promise<void> {
  const target = upload.user.resolvePath(requested)
  if (upload.staged.some(({ entry }) => entry.path === target)) {
    content.resume()
    throw new HttpError(
      400,
      `you cannot upload multiple files to the same path '${target}' in one upload request`,
    )
  }
  const file = await stageFile(target, upload.user.user, content, upload.metadata).catch(
    (error: unknown) => {
      throw httpErrorFromFsError(error, target)
    },
  )
  const hasMetadata = Object.keys(upload.metadata).length > 0
  upload.staged.push({
    entry: {
      path: target,
      name: path.basename(target),
      type: 'file',
      ...(hasMetadata ? { metadata: upload.metadata } : {}),
    },
    file,
  })
}

/** The request body as a Node stream, gunzipped when `Content-Encoding: gzip` (§3.3). */
function decodedBody(exchange: HttpExchange): Readable {
  const contentEncoding = exchange.header('content-encoding')
  const coding = requestBodyCoding(contentEncoding)
  if (coding === undefined) {
    throw new HttpError(400, `unsupported Content-Encoding: ${contentEncoding}, supported: [gzip]`)
  }
  const body = keepErrorForConsumer(exchange.request)
  if (coding === 'identity') return body
  // Errors travel down the pipeline to the gunzip stream, where the upload sees them.
  return pipeline(body, createGunzip(), () => undefined)
}
