import { ApiError } from './errors.js'

/**
 * The template routes' errors (wire contract §1.4 "Templates"). Where the contract quotes a
 * text it is used word for word; where it says only "400 with explicit message" (sizes, names)
 * the text names the rule broken.
 */
export const templateErrors = {
  nameRequired: () => new ApiError('badRequest', 'Name is required'),
  invalidTemplateName: (reason: string) =>
    new ApiError('badRequest', `Invalid template name: ${reason}`),
  invalidTag: (reason: string) => new ApiError('badRequest', `Invalid tag: ${reason}`),
  /** Infra's words for a `DELETE /templates/{t}` whose `t` is no template reference. */
  invalidTemplateID: (reason: string) =>
    new ApiError('badRequest', `Invalid template ID: ${reason}`),
  namespaceMismatch: (namespace: string, slug: string) =>
    new ApiError(
      'badRequest',
      `Template namespace '${namespace}' must be your team's slug '${slug}'`,
    ),
  cpuTooLow: () => new ApiError('badRequest', 'CPU count must be at least 1'),
  cpuNotEven: () => new ApiError('badRequest', 'CPU count must be 1 or an even number'),
  cpuTooHigh: (max: number) => new ApiError('badRequest', `CPU count must be at most ${max}`),
  memoryTooLow: (min: number) => new ApiError('badRequest', `Memory must be at least ${min} MiB`),
  memoryNotEven: () => new ApiError('badRequest', 'Memory must be an even number of MiB'),
  memoryTooHigh: (max: number) => new ApiError('badRequest', `Memory must be at most ${max} MiB`),
  templateDeleted: (templateID: string) =>
    new ApiError('notFound', `Template '${templateID}' has been deleted and cannot be rebuilt`),
  buildLimit: (limit: number) =>
    new ApiError(
      'tooManyRequests',
      `you have reached the maximum number of concurrent template builds (${limit}). Wait for one to finish and try again`,
    ),
  templateMissing: (templateID: string) =>
    new ApiError('notFound', `Template '${templateID}' not found`),
  templateNoAccess: () => new ApiError('forbidden', 'User does not have access to the template'),
  /** Infra answers an unknown build's status with 400, and starting one with 404 (§1.2). */
  buildNotFound: (buildID: string, kind: 'badRequest' | 'notFound') =>
    new ApiError(kind, `Build '${buildID}' not found`),
  buildNotWaiting: () => new ApiError('badRequest', 'build is not in waiting state'),
  invalidFilesHash: () => new ApiError('badRequest', 'Invalid files hash'),
  tagsRequired: () => new ApiError('badRequest', 'At least one tag is required'),
  tagTargetNotFound: (target: string, tag: string) =>
    new ApiError('notFound', `Template '${target}' with tag '${tag}' not found`),
  defaultTagUndeletable: () => new ApiError('badRequest', "Cannot delete the 'default' tag"),
  nameHasTag: (name: string) => new ApiError('badRequest', `Name '${name}' must not contain a tag`),
  templateInUse: (templateID: string, state: 'running' | 'paused') =>
    new ApiError(
      'badRequest',
      `cannot delete template '${templateID}' because there are ${state} sandboxes using it`,
    ),
  aliasNotFound: (alias: string) => new ApiError('notFound', `Template alias '${alias}' not found`),
  uploadSignatureInvalid: () =>
    new ApiError(
      'forbidden',
      'the upload URL is not valid: ask GET /templates/{id}/files/{hash} for a new one',
    ),
  uploadExpired: () =>
    new ApiError(
      'forbidden',
      'the upload URL has expired: ask GET /templates/{id}/files/{hash} for a new one',
    ),
  uploadLengthRequired: () =>
    new ApiError(
      'lengthRequired',
      'an upload needs an exact Content-Length; chunked uploads are refused',
    ),
  uploadTooLarge: (maxBytes: number) =>
    new ApiError('payloadTooLarge', `an upload may be at most ${maxBytes} bytes`),
  uploadLengthMismatch: (detail: string) => new ApiError('badRequest', `upload refused: ${detail}`),
} as const
