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

/**
 * Whether a request target names an envd control route. The path is decoded and its repeated
 * and trailing slashes folded first, so `//init/` or `/%69nit` cannot slip past the check.
 */
export function isEnvdControlRoute(requestTarget: string): boolean {
  return CONTROL_ROUTES.has(normalizedPath(requestTarget))
}

/** The path part of a request target, decoded, with repeated and trailing slashes folded. */
export function normalizedPath(requestTarget: string): string {
  const query = requestTarget.search(/[?#]/)
  const rawPath = query === -1 ? requestTarget : requestTarget.slice(0, query)
  let decoded: string
  try {
    decoded = decodeURIComponent(rawPath)
  } catch {
    decoded = rawPath
  }
  const folded = decoded.replace(/\/{2,}/g, '/').replace(/\/+$/, '')
  return folded === '' ? '/' : folded
}
