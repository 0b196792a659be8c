import type { EnvdState } from './state.js'

/** Wire contract §3.2: the exact body text of a missing or wrong `X-Access-Token`. */
export const UNAUTHORIZED_MESSAGE =
  'unauthorized access, please provide a valid access token or method signing if supported'

/** Routes that stay open when a token is set (wire contract §3.2). */
const openRoutes = new Set(['GET /health', 'GET /files', 'POST /files', 'POST /init'])

/** Whether a request may proceed past the access-token gate. */
export function passesTokenGate(
  state: EnvdState,
  method: string,
  pathname: string,
  tokenHeader: string | undefined,
): boolean {
  if (state.accessToken === undefined) return true
  if (openRoutes.has(`${method} ${pathname}`)) return true
  return state.isAccessToken(tokenHeader)
}

/**
 * The user named by `Authorization: Basic base64("<user>:")`, or undefined when the header
 * is absent or not Basic. The password part is ignored: envd has none.
 */
export function usernameFromBasicAuth(header: string | null | undefined): string | undefined {
  const match = /^Basic\s+(.+)$/i.exec(header ?? '')
  if (!match?.[1]) return undefined
  const decoded = Buffer.from(match[1], 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return colon === -1 ? decoded : decoded.slice(0, colon)
}
