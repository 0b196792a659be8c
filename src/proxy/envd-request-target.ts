import { proxyErrors } from './proxy-errors.js'

// envd routes only the control plane may call; through the sandbox URL they answer 404
// (wire contract §4.6: `/init`, `/freeze`, `/unfreeze`, `/fsfreeze`, `/fsthaw`, `/collapse`,
// `/upgrade` on port 49983).
const CONTROL_ROUTES = new Set([
  '/init',
  '/freeze',
  '/unfreeze',
  '/fsfreeze',
  '/fsthaw',
  '/collapse',
  '/upgrade',
])

// One segment of an envd path in canonical form. envd's HTTP routes (`/files`, `/health`, …)
// and its Connect methods (`/process.Process/Start`) are spelled with RFC 3986 unreserved
// characters only, so nothing else (percent-encoding, `\`, `;`, `#`, …) is ever needed.
const SEGMENT = /^[A-Za-z0-9._~-]+$/

/**
 * The request target to forward to envd's port, checked so that the proxy and envd read the
 * same path. Throws the 400 `invalidPath` for any target not in canonical origin form, and the
 * contract's 404 for a control route.
 *
 * envd routes on `new URL(req.url, base).pathname` (src/envd/server.ts). That WHATWG parsing
 * resolves `.`/`..` segments and their `%2e` spellings, reads `\` as `/`, takes `//x/init` as
 * the authority `x` and the path `/init`, takes the path of an absolute-form target, and
 * throws on `//`. Rather than restate all of it, the proxy refuses every path that this
 * parsing would change or that is not spelled canonically: what passes is one string to both.
 */
export function envdRequestTarget(requestTarget: string): string {
  const query = requestTarget.indexOf('?')
  const path = query === -1 ? requestTarget : requestTarget.slice(0, query)
  if (!isCanonicalPath(path)) throw proxyErrors.invalidPath()
  // envd's router is case-sensitive and strict about a trailing slash; the check is not, so
  // a router that folds either still cannot be reached.
  const route = path.toLowerCase().replace(/\/$/, '')
  if (CONTROL_ROUTES.has(route)) throw proxyErrors.internalRoute(path)
  return requestTarget
}

// Origin form (`/` and non-empty segments, one trailing slash allowed), unreserved characters
// only, and a fixed point of envd's own URL parsing (which leaves no dot segment in place).
function isCanonicalPath(path: string): boolean {
  if (!path.startsWith('/')) return false
  const segments = path.slice(1).split('/')
  if (segments.at(-1) === '') segments.pop()
  if (!segments.every((segment) => SEGMENT.test(segment))) return false
  return new URL(path, 'http://envd').pathname === path
}
