import { Code, ConnectError } from '@connectrpc/connect'
import { errnoCode } from '../../errno-code.js'
import { AccessDeniedError } from '../fs/access-check.js'

/** How each OS error code reads to a client, and the Connect code the SDK turns into its error class. */
const fsErrorCodes: Record<string, { code: Code; text: string }> = {
  ENOENT: { code: Code.NotFound, text: 'file not found' },
  EACCES: { code: Code.PermissionDenied, text: 'permission denied' },
  EPERM: { code: Code.PermissionDenied, text: 'operation not permitted' },
  EEXIST: { code: Code.AlreadyExists, text: 'file already exists' },
  ENOTDIR: { code: Code.InvalidArgument, text: 'not a directory' },
  EISDIR: { code: Code.InvalidArgument, text: 'is a directory' },
  EINVAL: { code: Code.InvalidArgument, text: 'invalid argument' },
  ELOOP: { code: Code.FailedPrecondition, text: 'cyclic symlink or too many levels of symlinks' },
  ENOSPC: { code: Code.ResourceExhausted, text: 'not enough disk space available' },
}

/**
 * Translates a failed filesystem operation on `path` into the Connect error of wire contract
 * §3.4 (`ENOENT` → `not_found`, `EEXIST` → `already_exists`, …). The code decides which error
 * class the e2b SDK throws. A ConnectError passes through unchanged. Anything unexpected becomes
 * `internal` with a generic message; its cause travels on `cause` for the log, never to the
 * client (the `ConnectError.cause` rationale).
 */
export function connectErrorFromFsError(error: unknown, path: string): ConnectError {
  if (error instanceof ConnectError) return error
  if (error instanceof AccessDeniedError) {
    return new ConnectError(error.message, Code.PermissionDenied, undefined, undefined, error)
  }
  const known = fsErrorCodes[errnoCode(error) ?? '']
  if (known) {
    return new ConnectError(`${known.text}: ${path}`, known.code, undefined, undefined, error)
  }
  return new ConnectError(
    `filesystem operation failed: ${path}`,
    Code.Internal,
    undefined,
    undefined,
    error,
  )
}
