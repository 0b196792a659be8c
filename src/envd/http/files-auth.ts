import { UNAUTHORIZED_MESSAGE } from '../auth.js'
import type { EnvdState } from '../state.js'
import { type FileOperation, fileSignature, signaturesEqual } from './file-signature.js'
import { HttpError } from './http-error.js'
import type { HttpExchange } from './http-exchange.js'

/**
 * Authorizes `GET /files` and `POST /files`, which the global token gate lets through
 * (wire contract §3.2). With a token set, a present `X-Access-Token` must be right; without
 * one, the URL must be signed for this path, operation and user, and not be expired.
 */
export function authorizeFileRequest(
  exchange: HttpExchange,
  state: EnvdState,
  operation: FileOperation,
): void {
  const accessToken = state.accessToken
  if (accessToken === undefined) return
  const header = exchange.header('x-access-token')
  if (header !== undefined && header !== '') {
    if (!state.isAccessToken(header)) throw new HttpError(401, UNAUTHORIZED_MESSAGE)
    return
  }
  const signature = exchange.query('signature')
  if (signature === undefined) throw new HttpError(401, 'missing signature query parameter')
  const expiration = parseExpiration(exchange.query('signature_expiration'))
  const expected = fileSignature({
    path: exchange.query('path') ?? '',
    operation,
    username: exchange.query('username') ?? '',
    accessToken,
    expiration,
  })
  // envd checks the signature before the expiry, so a tampered URL never learns its age.
  if (!signaturesEqual(signature, expected)) throw new HttpError(401, 'invalid signature')
  if (expiration !== undefined && expiration < Math.floor(Date.now() / 1000)) {
    throw new HttpError(401, 'signature is already expired')
  }
}

function parseExpiration(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^-?\d+$/.test(value)) {
    throw new HttpError(400, `invalid signature_expiration '${value}': expected unix seconds`)
  }
  return Number(value)
}
