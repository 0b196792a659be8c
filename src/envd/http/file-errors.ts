import { errnoCode } from '../../errno-code.js'
import { AccessDeniedError } from '../fs/access-check.js'
import { HttpError } from './http-error.js'

/** The contract's text for a full disk (wire contract §3.3, `507`). */
export const NO_DISK_SPACE_MESSAGE = 'not enough disk space available'

/**
 * Translates what the file routes' filesystem and zlib calls throw into envd's HTTP errors,
 * the one place that decides their status. A denied access is `403`: the SDK turns it into a
 * `SandboxError` carrying the reason, where `401` would read as a bad token (the SDK's
 * `AuthenticationError`) and `400` as a malformed call. Anything unrecognised is returned as
 * is, for `app.onError` to log and answer `500`.
 * @param path the resolved path the failed operation was about.
 */
export function httpErrorFromFsError(error: unknown, path: string): unknown {
  if (error instanceof HttpError) return error
  if (error instanceof AccessDeniedError) return new HttpError(403, error.message)
  const code = errnoCode(error)
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return new HttpError(403, `permission denied: '${path}'`)
    case 'ENOSPC':
    case 'EDQUOT':
      return new HttpError(507, NO_DISK_SPACE_MESSAGE)
    case 'ENOENT':
      return new HttpError(404, `path '${path}' does not exist`)
    case 'ENOTDIR':
    case 'EEXIST':
      return new HttpError(400, `a parent of '${path}' is not a directory`)
    case 'EISDIR':
      return new HttpError(400, `path '${path}' is a directory`)
    case 'ENAMETOOLONG':
      return new HttpError(400, `path '${path}' is too long`)
    case 'EROFS':
      return new HttpError(403, `path '${path}' is on a read-only filesystem`)
    // The client went away mid-upload: its failure, not envd's, and nobody reads the answer.
    case 'ECONNRESET':
      return new HttpError(400, 'the request body ended early: the client closed the connection')
  }
  if (code?.startsWith('Z_') && error instanceof Error) {
    return new HttpError(400, `error decompressing request body: ${error.message}`)
  }
  return error
}
