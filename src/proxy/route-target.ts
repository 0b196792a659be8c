import { isIP } from 'node:net'
import { proxyErrors } from './proxy-errors.js'

/** Which sandbox port a request is for. */
export interface RouteTarget {
  sandboxID: string
  port: number
  /** True when the target came from `E2b-Sandbox-Id`/`E2b-Sandbox-Port` rather than the host. */
  viaHeaders: boolean
}

type HeaderValue = string | string[] | undefined

const SANDBOX_ID_HEADER = 'e2b-sandbox-id'
const SANDBOX_PORT_HEADER = 'e2b-sandbox-port'

// Sandbox IDs are lowercase alphanumerics (wire contract summary 4); one DNS label at most.
const SANDBOX_ID = /^[a-z0-9]{1,63}$/
const PORT = /^[0-9]{1,5}$/

/**
 * The sandbox and port a request addresses (wire contract §4.6 "Host parsing" and "Header
 * routing"). Throws the contract's 400 `ProxyError` for a bad host, port, ID or a lone header.
 */
export function routeTarget(
  host: string | undefined,
  headers: Record<string, HeaderValue>,
  domain: string,
): RouteTarget {
  const hostname = hostnameOf(host ?? '')
  const idHeader = single(headers[SANDBOX_ID_HEADER])
  const portHeader = single(headers[SANDBOX_PORT_HEADER])
  // Headers count only on hosts that cannot carry the target themselves: localhost, an IP
  // address, or the shared `sandbox.<domain>` host (§4.6). Elsewhere the host wins.
  if (acceptsHeaders(hostname, domain) && (idHeader !== '' || portHeader !== '')) {
    if (idHeader === '' || portHeader === '') throw proxyErrors.missingHeader()
    return { sandboxID: sandboxIDFrom(idHeader), port: portFrom(portHeader), viaHeaders: true }
  }
  return { ...targetFromHost(hostname), viaHeaders: false }
}

/** The host without its port, lowercased: DNS names are case-insensitive. */
export function hostnameOf(host: string): string {
  const lower = host.trim().toLowerCase()
  if (lower.startsWith('[')) {
    const end = lower.indexOf(']')
    return end === -1 ? lower : lower.slice(1, end)
  }
  const colon = lower.lastIndexOf(':')
  // A second colon means a bare IPv6 address, which has no port to strip.
  if (colon !== -1 && lower.indexOf(':') === colon) return lower.slice(0, colon)
  return lower
}

function acceptsHeaders(hostname: string, domain: string): boolean {
  return hostname === 'localhost' || isIP(hostname) !== 0 || isSharedSandboxHost(hostname, domain)
}

/** Whether `hostname` is `sandbox.<domain>`, the host every sandbox shares (§4.6); `domain` may carry a port. */
export function isSharedSandboxHost(hostname: string, domain: string): boolean {
  return hostname === `sandbox.${hostnameOf(domain)}`
}

// `<port>-<sandboxID>[-<clientID>].<domain>`: the left-most label split on `-`; part 0 is the
// port, part 1 the ID, and anything after it (the legacy clientID) is ignored (§4.6).
function targetFromHost(hostname: string): { sandboxID: string; port: number } {
  const dot = hostname.indexOf('.')
  if (dot === -1) throw proxyErrors.invalidHost()
  const [portPart, idPart] = hostname.slice(0, dot).split('-')
  if (portPart === undefined || idPart === undefined) throw proxyErrors.invalidHost()
  return { port: portFrom(portPart), sandboxID: sandboxIDFrom(idPart) }
}

// A header ID may still carry the legacy `-<clientID>` suffix that servers strip (wire contract summary 4).
function sandboxIDFrom(value: string): string {
  const [id = ''] = value.split('-')
  if (!SANDBOX_ID.test(id)) throw proxyErrors.invalidSandboxID()
  return id
}

function portFrom(value: string): number {
  const port = PORT.test(value) ? Number(value) : 0
  if (port < 1 || port > 65535) throw proxyErrors.invalidSandboxPort()
  return port
}

// Node joins repeated custom headers with ", "; an array only appears for set-cookie, but the
// header type allows it, so the first value is taken.
function single(value: HeaderValue): string {
  const first = Array.isArray(value) ? value[0] : value
  return (first ?? '').trim()
}
