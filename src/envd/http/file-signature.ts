import { createHash, timingSafeEqual } from 'node:crypto'

/** What a signed `/files` URL grants: `read` for GET, `write` for POST (wire contract §3.2). */
export type FileOperation = 'read' | 'write'

export interface FileSignatureInput {
  /** Exactly the `path` query value, `""` when absent. */
  path: string
  operation: FileOperation
  /** Exactly the `username` query value, `""` when absent. */
  username: string
  accessToken: string
  /** Unix seconds; part of the signed text only when the URL carries `signature_expiration`. */
  expiration?: number | undefined
}

/**
 * The signature a `/files` URL must carry (wire contract §3.2):
 * `"v1_" + base64(sha256("<path>:<operation>:<username>:<token>[:<expiration>]"))`, standard
 * alphabet without padding, as the SDK's `getSignature` computes it.
 */
export function fileSignature(input: FileSignatureInput): string {
  const fields = [input.path, input.operation, input.username, input.accessToken]
  if (input.expiration !== undefined) fields.push(String(input.expiration))
  const digest = createHash('sha256').update(fields.join(':')).digest('base64')
  return `v1_${digest.replace(/=+$/, '')}`
}

/** Whether two signatures are equal, in time independent of where they differ. */
export function signaturesEqual(given: string, expected: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}
