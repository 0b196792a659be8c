import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http'
import type { Socket } from 'node:net'
import { TLSSocket } from 'node:tls'
import { ENVD_PORT, TRAFFIC_TOKEN_HEADER } from './proxy-errors.js'
import { hostnameOf, isSharedSandboxHost, type RouteTarget } from './route-target.js'

// Hop-by-hop fields describe one connection, not the message, so a proxy drops them (RFC 9110
// §7.6.1), together with every field the Connection header names. `Proxy-Connection` and
// `Keep-Alive` are the pre-standard ones clients still send. `TE` is hop-by-hop too.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'transfer-encoding',
  'upgrade',
])

// Sandbar's credentials, which sandbox code never sees (DESIGN "Trust"): the traffic token is
// spent at the proxy's gate and an API key belongs to the control plane, so neither goes on.
// envd's `X-Access-Token` goes to envd's port (wire contract §3.2) and, as the one deliberate
// allowance, to the code interpreter's port 49999: `@e2b/code-interpreter` sends it with
// `/execute` for the interpreter server to read envd's `GET /envs` (wave2-contracts §1.1).
// A user service's own credentials (`Authorization`, cookies, its query) pass unchanged.
const SANDBAR_CREDENTIALS = [TRAFFIC_TOKEN_HEADER, 'x-api-key']
const ENVD_TOKEN_HEADER = 'x-access-token'
const CODE_INTERPRETER_PORT = 49999
const ENVD_TOKEN_PORTS = new Set([ENVD_PORT, CODE_INTERPRETER_PORT])

/** The headers of a message minus its hop-by-hop fields. */
export function endToEndHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = connectionTokens(headers.connection)
  const kept: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue
    kept[name] = value
  }
  return kept
}

/** Request context a forwarded request carries to the sandbox. */
export interface ForwardContext {
  target: RouteTarget
  domain: string
  clientAddress: string | undefined
  /** Whether the client reached the proxy over TLS. */
  tls: boolean
  /** The sandbox's `network.maskRequestHost`, if it set one. */
  maskRequestHost?: string | undefined
}

/** Whether a client socket is a TLS connection the proxy terminated. */
export function isTls(socket: Socket): boolean {
  return socket instanceof TLSSocket
}

// The placeholder in `maskRequestHost` that stands for the port the request was for (§4.6):
// literal text, not a template.
// biome-ignore lint/suspicious/noTemplateCurlyInString: E2B's placeholder syntax
const PORT_PLACEHOLDER = '${PORT}'

/**
 * The headers sent upstream. `Host` is kept as the client sent it, because that is what
 * E2B's proxy forwards and what user services (dev servers checking allowed hosts, apps building
 * absolute URLs) see on E2B; a request routed through the shared `sandbox.<domain>` host gets
 * `<port>-<sandboxID>.<domain>` instead, as E2B's client-proxy rewrites it (wire contract §4.6).
 * A sandbox created with `network.maskRequestHost` gets that host on its user ports, for dev
 * servers that answer only their allowed hosts (Vite, webpack); envd's port keeps the real one.
 * `X-Forwarded-For` gains the client address; `X-Forwarded-Host` and `-Proto` keep a value
 * set by a load balancer in front, else describe this hop. Sandbar's credentials are dropped.
 * Names leave in Go's canonical form.
 */
export function upstreamHeaders(
  headers: IncomingHttpHeaders,
  context: ForwardContext,
): OutgoingHttpHeaders {
  const out = endToEndHeaders(headers)
  for (const name of SANDBAR_CREDENTIALS) delete out[name]
  if (!ENVD_TOKEN_PORTS.has(context.target.port)) delete out[ENVD_TOKEN_HEADER]
  const host = headers.host ?? ''
  const { port, sandboxID } = context.target
  if (context.target.viaHeaders && isSharedSandboxHost(hostnameOf(host), context.domain)) {
    out.host = `${port}-${sandboxID}.${context.domain}`
  }
  if (context.maskRequestHost !== undefined && port !== ENVD_PORT) {
    out.host = context.maskRequestHost.replaceAll(PORT_PLACEHOLDER, String(port))
  }
  const client = context.clientAddress ?? ''
  const prior = headers['x-forwarded-for']
  out['x-forwarded-for'] = prior === undefined || prior === '' ? client : `${prior}, ${client}`
  out['x-forwarded-host'] = headers['x-forwarded-host'] ?? host
  out['x-forwarded-proto'] = headers['x-forwarded-proto'] ?? (context.tls ? 'https' : 'http')
  return canonicalNames(out)
}

/**
 * The headers under the names Go writes (`Host`, `X-Forwarded-For`): E2B's proxy is Go's, and
 * a sandbox service reading its request raw (a `nc -l` in the SDK's own tests) sees the same
 * bytes behind Sandbar. Names are case-insensitive to every HTTP parser, so nothing else changes.
 */
function canonicalNames(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const named: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(headers)) named[canonicalName(name)] = value
  return named
}

/**
 * Canonical forms already worked out: every proxied request rewrites the same dozen names, and
 * the regular expression was a twentieth of the proxy's time per request. Capped, since header
 * names are the client's to choose; names past the cap are worked out each time.
 */
const canonicalNamesSeen = new Map<string, string>()
const CANONICAL_NAMES_KEPT = 512

/** Go's `CanonicalMIMEHeaderKey`: upper case first and after each `-`, lower case elsewhere. */
export function canonicalName(name: string): string {
  const seen = canonicalNamesSeen.get(name)
  if (seen !== undefined) return seen
  const canonical = name
    .toLowerCase()
    .replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase())
  if (canonicalNamesSeen.size < CANONICAL_NAMES_KEPT) canonicalNamesSeen.set(name, canonical)
  return canonical
}

function connectionTokens(value: string | undefined): Set<string> {
  if (value === undefined) return new Set()
  return new Set(
    value
      .split(',')
      .map((token) => token.trim().toLowerCase())
      .filter((token) => token !== ''),
  )
}
