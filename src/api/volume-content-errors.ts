import type { VolumePathErrorKind } from '../agent/index.js'

type ContentErrorStatus = 400 | 401 | 404 | 409 | 500 | 507

/** The content API's failures; each has one status and one string `code`. */
export type ContentErrorKind =
  | 'badRequest'
  | 'unauthorized'
  | 'notFound'
  | 'conflict'
  | 'insufficientStorage'
  | 'internal'

/** A missing kind fails to compile (STYLE habit 7). */
const statusOf: Record<ContentErrorKind, ContentErrorStatus> = {
  badRequest: 400,
  unauthorized: 401,
  notFound: 404,
  conflict: 409,
  // A full volume: neither the request's fault nor a fault of the service.
  insufficientStorage: 507,
  internal: 500,
}

const codeOf: Record<ContentErrorKind, string> = {
  badRequest: 'bad_request',
  unauthorized: 'unauthorized',
  notFound: 'not_found',
  conflict: 'conflict',
  insufficientStorage: 'insufficient_storage',
  internal: 'internal',
}

/** How each refusal of the agent's volume files reaches the client. */
export const contentErrorKindOf: Record<VolumePathErrorKind, ContentErrorKind> = {
  notFound: 'notFound',
  exists: 'conflict',
  notDirectory: 'badRequest',
  symlink: 'badRequest',
  root: 'badRequest',
  wrongType: 'badRequest',
  tooDeep: 'badRequest',
  busy: 'conflict',
  nameTooLong: 'badRequest',
  noSpace: 'insufficientStorage',
}

/**
 * An error of the volume content API: its body is `{code, message}` with a **string** code,
 * unlike the control plane's integer (wave2-contracts §2.3). The SDK raises 404 as
 * VolumePathNotFoundError, 401 as AuthenticationError, the rest as VolumeError.
 */
export class ContentError extends Error {
  constructor(
    readonly kind: ContentErrorKind,
    message: string,
  ) {
    super(message)
  }

  get status(): ContentErrorStatus {
    return statusOf[this.kind]
  }

  body(): { code: string; message: string } {
    return { code: codeOf[this.kind], message: this.message }
  }
}

/** The content API's own texts (the contract quotes these two). */
export const contentErrors = {
  depth: () => new ContentError('badRequest', 'depth must be between 1 and 10'),
  validation: (detail: string) => new ContentError('badRequest', `validation error: ${detail}`),
  unauthorized: (reason: string) => new ContentError('unauthorized', reason),
  internal: () => new ContentError('internal', 'internal server error'),
} as const
