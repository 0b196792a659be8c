import { stat } from 'node:fs/promises'
import path from 'node:path'
import { type AccessKind, mayAccess } from '../permissions.js'
import type { OsUser } from '../users.js'

/** The error an access check throws: shaped like the kernel's, so one mapper handles both. */
export class AccessDeniedError extends Error {
  readonly code = 'EACCES'
  constructor(
    readonly path: string,
    kind: AccessKind,
  ) {
    super(`permission denied: cannot ${kind} '${path}'`)
  }
}

/** Throws AccessDeniedError unless `user` may `kind` the existing entry at `target`. */
export async function assertMayAccess(
  target: string,
  user: OsUser,
  kind: AccessKind,
): Promise<void> {
  const info = await stat(target)
  if (!mayAccess(info, user, kind)) throw new AccessDeniedError(target, kind)
}

/**
 * Throws AccessDeniedError unless `user` may create `target` (and any missing parents): the
 * nearest existing ancestor must be writable and searchable by the user.
 */
export async function assertMayCreate(target: string, user: OsUser): Promise<void> {
  let dir = path.dirname(target)
  for (;;) {
    const info = await stat(dir).catch(() => undefined)
    if (info) {
      if (!mayAccess(info, user, 'write') || !mayAccess(info, user, 'execute')) {
        throw new AccessDeniedError(dir, 'write')
      }
      return
    }
    const parent = path.dirname(dir)
    if (parent === dir) return
    dir = parent
  }
}
