import { errnoCode } from '../../errno-code.js'

export type AccessKind = 'read' | 'write'

/** A denied access, naming what was denied: one mapper per surface renders it. */
export class AccessDeniedError extends Error {
  readonly code = 'EACCES'
  constructor(
    readonly path: string,
    kind: AccessKind,
  ) {
    super(`permission denied: cannot ${kind} '${path}'`)
  }
}

/**
 * The error to throw for `error`, a failure of a call made with the request user's
 * credentials (`asUser`) on `path`: the kernel's EACCES or EPERM becomes AccessDeniedError
 * for `kind`; anything else passes through.
 */
export function deniedAs(error: unknown, path: string, kind: AccessKind): unknown {
  const code = errnoCode(error)
  return code === 'EACCES' || code === 'EPERM' ? new AccessDeniedError(path, kind) : error
}
