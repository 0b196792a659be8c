import type { UnreachableEntry } from '../agent/index.js'

/** The kinds of failure the E2B API reports; each has exactly one HTTP status. */
export type ApiErrorKind =
  | 'badRequest'
  | 'unauthorized'
  | 'forbidden'
  | 'notFound'
  | 'conflict'
  | 'lengthRequired'
  | 'payloadTooLarge'
  | 'tooManyRequests'
  | 'internal'
  | 'notImplemented'

type ApiErrorStatus = 400 | 401 | 403 | 404 | 409 | 411 | 413 | 429 | 500 | 501

/** A missing kind fails to compile (STYLE habit 7). */
const statusOf: Record<ApiErrorKind, ApiErrorStatus> = {
  badRequest: 400,
  unauthorized: 401,
  forbidden: 403,
  notFound: 404,
  conflict: 409,
  lengthRequired: 411,
  payloadTooLarge: 413,
  tooManyRequests: 429,
  internal: 500,
  notImplemented: 501,
}

/** An error the API answers with E2B's body `{code, message}` (wire contract §1.1). */
export class ApiError extends Error {
  constructor(
    readonly kind: ApiErrorKind,
    message: string,
  ) {
    super(message)
  }

  get status(): ApiErrorStatus {
    return statusOf[this.kind]
  }

  /** The body: the SDK reads the numeric `code` to tell a 404 from other failures. */
  body(): { code: number; message: string } {
    return { code: this.status, message: this.message }
  }
}

/**
 * Every error the API sends, with its text quoted from the wire contract (§1.1, §1.4): clients
 * and tests match on these words.
 */
export const apiErrors = {
  invalidApiKey: (detail: string) =>
    new ApiError(
      'unauthorized',
      `Invalid API key, please visit https://e2b.dev/docs/api-key for more information.\n${detail}`,
    ),
  validation: (detail: string) => new ApiError('badRequest', `validation error: ${detail}`),
  invalidSandboxID: () => new ApiError('badRequest', 'Invalid sandbox ID'),
  sandboxNotFound: (sandboxID: string) =>
    new ApiError('notFound', `Sandbox "${sandboxID}" doesn't exist or you don't have access to it`),
  sandboxBeingKilled: (sandboxID: string) =>
    new ApiError('conflict', `Sandbox "${sandboxID}" is being killed`),
  sandboxAlreadyPaused: (sandboxID: string) =>
    new ApiError('conflict', `Error pausing sandbox - sandbox '${sandboxID}' is already paused`),
  sandboxCannotPause: (sandboxID: string, state: string) =>
    new ApiError('conflict', `Sandbox '${sandboxID}' cannot be paused while in '${state}' state`),
  sandboxAlreadyRunning: (sandboxID: string) =>
    new ApiError('conflict', `Sandbox ${sandboxID} is already running`),
  /** Infra's words for a snapshot of a sandbox that is not running. */
  sandboxCannotSnapshot: (sandboxID: string, state: string) =>
    new ApiError(
      'conflict',
      `Sandbox '${sandboxID}' cannot be snapshotted while in '${state}' state`,
    ),
  /** Infra's words for a fork of a paused sandbox. */
  sandboxForkPaused: (sandboxID: string) =>
    new ApiError(
      'conflict',
      `Sandbox '${sandboxID}' is paused and cannot be forked; resume it first`,
    ),
  sandboxCannotFork: (sandboxID: string, state: string) =>
    new ApiError('conflict', `Sandbox '${sandboxID}' cannot be forked while in '${state}' state`),
  /**
   * Sandbar's own: CRIU cannot checkpoint processes whose mounts include a volume's bind, so
   * a sandbox with volumes is neither snapshotted nor forked.
   */
  sandboxMountsVolumes: (sandboxID: string, operation: 'snapshotted' | 'forked') =>
    new ApiError(
      'badRequest',
      `Sandbox '${sandboxID}' cannot be ${operation}: it mounts volumes, and Sandbar cannot checkpoint a sandbox with volumes mounted. Start one without volumes to snapshot or fork it.`,
    ),
  /** A snapshot name (§1.3 SandboxSnapshotRequest) or `GET /snapshots` filter that is none. */
  invalidName: (reason: string) => new ApiError('badRequest', `Invalid name: ${reason}`),
  /** A snapshot's template deleted while the snapshot was taken: nothing holds it any more. */
  snapshotTemplateDeleted: (templateID: string) =>
    new ApiError('conflict', `Template '${templateID}' was deleted while the snapshot was taken`),
  forkCountTooLow: () => new ApiError('badRequest', 'Count must be at least 1'),
  forkCountTooHigh: (max: number) =>
    new ApiError('badRequest', `Count cannot be greater than ${max}`),
  /** The source keeps its slot, so that many forks could never all run (infra's words). */
  forkCountOverLimit: (limit: number) =>
    new ApiError(
      'badRequest',
      `Count must be lower than the maximum number of concurrent sandboxes (${limit})`,
    ),
  templateNotFound: (templateID: string) =>
    new ApiError('notFound', `template '${templateID}' not found`),
  tagNotFound: (tag: string, templateID: string) =>
    new ApiError('notFound', `tag '${tag}' does not exist for template '${templateID}'`),
  templateForbidden: (templateID: string) =>
    new ApiError('forbidden', `you don't have access to template '${templateID}'`),
  invalidTemplateReference: (reason: string) =>
    new ApiError('badRequest', `Invalid template reference: ${reason}`),
  timeoutNotPositive: () => new ApiError('badRequest', 'Timeout must be greater than 0'),
  timeoutTooLong: (maxHours: number) =>
    new ApiError('badRequest', `Timeout cannot be greater than ${maxHours} hours`),
  maxLengthExceeded: () => new ApiError('badRequest', 'Max instance length exceeded'),
  /**
   * §1.4's 429 past the concurrency limit, in Sandbar's words: the limit is this host's (`sandbar
   * serve --max-sandboxes`, by default what the host holds), not a billing tier's.
   */
  concurrencyLimit: (limit: number) =>
    new ApiError(
      'tooManyRequests',
      `you have reached the maximum number of concurrent sandboxes on this Sandbar server (${limit}). Kill or pause one, or have its operator restart sandbar serve with a higher --max-sandboxes (its start output says what bounds the limit on this host)`,
    ),
  privateNeedsSecure: () =>
    new ApiError(
      'badRequest',
      "You cannot create a sandbox without public access unless you enable secure envd access via 'secure' flag.",
    ),
  domainsNeedDenyAll: () =>
    new ApiError(
      'badRequest',
      "When specifying allowed domains in allow out, you must include 'ALL_TRAFFIC' in deny out to block all other traffic.",
    ),
  invalidDeniedCIDR: (entry: string) => new ApiError('badRequest', `invalid denied CIDR ${entry}`),
  /**
   * An allowOut entry that is neither an IP/CIDR nor (with deny-all) a domain the contract
   * allows: Sandbar has no domain-filtering proxy (§4.5), so it refuses with the agent's text.
   */
  unsupportedAllowedEntry: (message: string) => new ApiError('badRequest', message),
  /** §4.5: `PUT /network` answers 409 for a sandbox not running; the contract gives no text. */
  sandboxNotRunning: (sandboxID: string) =>
    new ApiError('conflict', `Sandbox "${sandboxID}" is not running`),
  /** A request body over the API's limit (app.ts), refused before it is read into memory. */
  bodyTooLarge: (maxBytes: number) =>
    new ApiError('payloadTooLarge', `request body is larger than ${maxBytes} bytes`),
  /** wave2-contracts §2.4: one line per bad entry, all of them at once. */
  invalidVolumeMounts: (lines: readonly string[]) =>
    new ApiError('badRequest', `invalid mounts:\n${lines.join('\n')}`),
  internal: () => new ApiError('internal', 'internal server error'),
  invalidVolumeName: () => new ApiError('badRequest', 'Invalid volume name'),
  volumeNameTaken: (name: string) =>
    new ApiError('badRequest', `Volume with name '${name}' already exists`),
  /** Also for an ID that is no UUID: the tolerant choice of wave2-contracts §2.1. */
  volumeNotFound: () => new ApiError('notFound', 'Volume not found'),
  /** Sandbar's `sizeMB` extension of `NewVolume`, out of range. */
  volumeSize: (minMB: number, maxMB: number) =>
    new ApiError('badRequest', `sizeMB must be a whole number from ${minMB} to ${maxMB}`),
  volumeCreateFailed: () => new ApiError('internal', 'Error when creating volume'),
  /**
   * A route of the contract whose feature Sandbar lacks: 501 with a message that names the
   * feature, so the SDK's error says where the user stands rather than "not found"
   * (routes/unsupported-routes.ts holds the messages).
   */
  notImplemented: (message: string) => new ApiError('notImplemented', message),
  /**
   * A request field Sandbar would otherwise store and not honour: 400 naming the field, and why
   * (unsupported-fields.ts).
   */
  unsupportedField: (field: string, reason: string) =>
    new ApiError('badRequest', `${field} is not supported by this Sandbar server yet: ${reason}`),
  /**
   * An allowOut entry overlapping what no sandbox may reach (the agent drops it before any
   * allow rule): Sandbar's own text, since E2B's always-denied ranges are silently ignored.
   */
  unreachableAllowedEntry: ({ entry, network }: UnreachableEntry) =>
    new ApiError(
      'badRequest',
      `allowOut entry ${entry} overlaps ${
        network.kind === 'address pool'
          ? `the sandbox address pool ${network.cidr}`
          : `the host address ${network.cidr.replace(/\/32$/, '')}`
      }: sandboxes never reach other sandboxes or the host`,
    ),
} as const
