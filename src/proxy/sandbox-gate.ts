import type { IncomingHttpHeaders } from 'node:http'
import type { Logger } from '../logger.js'
import { envdRequestTarget } from './envd-request-target.js'
import type { ProxiedSandbox, SandboxDirectory } from './index.js'
import { ENVD_PORT, proxyErrors, TRAFFIC_TOKEN_HEADER } from './proxy-errors.js'
import { type RouteTarget, routeTarget } from './route-target.js'
import { secretsEqual, trafficTokenVerdict } from './traffic-token.js'

/** A request the gate lets through: where it goes and what the client asked for. */
export interface Admission {
  target: RouteTarget
  sandbox: ProxiedSandbox
  /** The request target to send upstream: envd's port gets only the form the gate checked. */
  path: string
}

/** What the gate reads from a request; both a plain request and an upgrade supply it. */
export interface GateRequest {
  url: string
  headers: IncomingHttpHeaders
}

/**
 * Decides whether a request may reach a sandbox port, resuming a paused sandbox on the way
 * (wire contract §4.4, §4.6). Throws `ProxyError` with the contract's answer when it may not.
 */
export class SandboxGate {
  // One resume per sandbox at a time: concurrent requests for a paused sandbox share it (§4.4
  // "Concurrent auto-resumes wait ... for an in-flight transition").
  private readonly resuming = new Map<string, Promise<ProxiedSandbox>>()

  constructor(
    private readonly directory: SandboxDirectory,
    private readonly domain: string,
    private readonly logger: Logger,
  ) {}

  async admit(request: GateRequest): Promise<Admission> {
    const target = routeTarget(request.headers.host, request.headers, this.domain)
    // A user port's service reads its request target as it likes; envd's port is Sandbar's.
    const path = target.port === ENVD_PORT ? envdRequestTarget(request.url) : request.url
    const found = await this.directory.lookup(target.sandboxID)
    if (found === undefined) throw proxyErrors.sandboxNotFound(target.sandboxID)
    const sandbox = found.state === 'running' ? found : await this.resume(found, target, request)
    checkTrafficToken(sandbox, target, request.headers)
    return { target, sandbox, path }
  }

  private async resume(
    paused: ProxiedSandbox,
    target: RouteTarget,
    request: GateRequest,
  ): Promise<ProxiedSandbox> {
    // A paused sandbox without auto-resume is "not running, not resumable": 502 not found (§4.6).
    if (!paused.autoResume) throw proxyErrors.sandboxNotFound(paused.sandboxID)
    if (!mayResume(paused, target, request.headers)) {
      throw proxyErrors.resumeDenied(paused.sandboxID)
    }
    const inFlight = this.resuming.get(paused.sandboxID)
    if (inFlight !== undefined) return inFlight
    const resumed = this.directory
      .resume(paused.sandboxID)
      .catch((cause: unknown) => {
        this.logger.warn({ sandboxID: paused.sandboxID, err: cause }, 'auto-resume failed')
        throw proxyErrors.sandboxNotFound(paused.sandboxID)
      })
      .finally(() => this.resuming.delete(paused.sandboxID))
    this.resuming.set(paused.sandboxID, resumed)
    return resumed
  }
}

// Auto-resume credentials (§4.4): a private sandbox's traffic token on its other ports, a
// secure sandbox's envd access token on the envd port; a sandbox with neither resumes for anyone.
function mayResume(
  sandbox: ProxiedSandbox,
  target: RouteTarget,
  headers: IncomingHttpHeaders,
): boolean {
  const expected = target.port === ENVD_PORT ? sandbox.envdAccessToken : sandbox.trafficAccessToken
  if (expected === undefined) return true
  const header =
    target.port === ENVD_PORT ? headers['x-access-token'] : headers[TRAFFIC_TOKEN_HEADER]
  return typeof header === 'string' && secretsEqual(expected, header)
}

// A private sandbox's ports other than envd need the traffic token; envd checks its own
// `X-Access-Token` (§4.6 "Traffic access token").
function checkTrafficToken(
  sandbox: ProxiedSandbox,
  target: RouteTarget,
  headers: IncomingHttpHeaders,
): void {
  if (target.port === ENVD_PORT || sandbox.trafficAccessToken === undefined) return
  const verdict = trafficTokenVerdict(sandbox.trafficAccessToken, headers[TRAFFIC_TOKEN_HEADER])
  if (verdict === 'missing') throw proxyErrors.trafficTokenMissing(sandbox.sandboxID)
  if (verdict === 'invalid') throw proxyErrors.trafficTokenInvalid(sandbox.sandboxID)
}
