import { PassThrough, Readable } from 'node:stream'
import busboy from 'busboy'
import { HttpError } from './http-error.js'

/** One `file` part of a multipart upload, streamed as it arrives. */
export interface FilePart {
  /** The part's `filename` exactly as sent, directories included (wire contract §3.3). */
  filename: string | undefined
  content: Readable
}

/**
 * The most a `file` part without a filename may hold. busboy treats such a part as a form
 * field and buffers it; browsers and the SDK only send one for a string value
 * (`form.append('file', 'text')`, as E2B's own signed-upload example does).
 */
const MAX_FIELD_PART_BYTES = 1024 * 1024

/**
 * The parts named `file` of a `multipart/form-data` body, in body order and never buffered
 * (but for the small filename-less ones above): the next part is read only after the consumer
 * has drained the current one's `content`. Other parts are skipped. A malformed body is `400`.
 */
export async function* fileParts(body: Readable, contentType: string): AsyncGenerator<FilePart> {
  const parser = createParser(contentType)
  // Parts in body order, each read once the consumer asks for the next. A stream of objects,
  // not `events.on`: that sets up two 2,048-slot queues per upload, a third of the memory a
  // small upload allocated. A parser error that lands after the loop ended (the consumer gave
  // up on the body) must not be an unhandled `error` event.
  const parts = keepErrorForConsumer(new Readable({ objectMode: true, read: () => undefined }))
  parser.on('file', (name: string, stream: Readable, info: busboy.FileInfo) => {
    // Wired up at once: busboy may fail the part (a body cut short) before the consumer's
    // loop resumes, and an `error` event without a listener would crash envd.
    if (name !== 'file') {
      // The parser reports the same failure, and the loop below throws it.
      stream.on('error', () => undefined).resume()
      return
    }
    const content = keepErrorForConsumer(new PassThrough())
    stream.on('error', (error) => content.destroy(asUploadError(error)))
    stream.pipe(content)
    parts.push({ filename: info.filename, content } satisfies FilePart)
  })
  parser.on('field', (name: string, value: string, info: busboy.FieldInfo) => {
    if (name !== 'file') return
    if (info.valueTruncated) {
      parts.destroy(new HttpError(400, 'a file part without a filename is limited to 1 MiB'))
    } else {
      const content = Readable.from([Buffer.from(value)])
      parts.push({ filename: undefined, content } satisfies FilePart)
    }
  })
  parser.on('close', () => parts.push(null))
  parser.on('error', (error: Error) => parts.destroy(error))
  body.on('error', (error) => parser.destroy(error))
  body.pipe(parser)
  try {
    for await (const part of parts) yield part as FilePart
  } catch (error) {
    throw asUploadError(error)
  } finally {
    body.unpipe(parser)
    parser.destroy()
  }
}

function createParser(contentType: string): busboy.Busboy {
  try {
    // Filenames are full destination paths (preservePath) and the SDK's FormData sends them
    // as raw UTF-8 (defParamCharset); busboy would otherwise take the basename, as latin1.
    return busboy({
      headers: { 'content-type': contentType },
      preservePath: true,
      defParamCharset: 'utf8',
      limits: { fieldSize: MAX_FIELD_PART_BYTES },
    })
  } catch (error) {
    throw asUploadError(error)
  }
}

/** busboy's own errors carry no `code`; OS and zlib errors keep theirs for `file-errors.ts`. */
function asUploadError(error: unknown): Error {
  if (!(error instanceof Error)) return new HttpError(400, `error parsing multipart form: ${error}`)
  if (error instanceof HttpError || 'code' in error) return error
  return new HttpError(400, `error parsing multipart form: ${error.message}`)
}

/**
 * Marks a stream's errors as handled: one may arrive before the consumer attaches its
 * pipeline (say, while it checks permissions), and an `error` event without a listener would
 * crash envd. The consumer still sees it, as the stream's stored `errored` state.
 */
export function keepErrorForConsumer<T extends Readable>(stream: T): T {
  return stream.on('error', () => undefined)
}
