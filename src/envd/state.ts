import { timingSafeEqual } from 'node:crypto'

/** The body of `POST /init` that envd acts on (wire contract §3.3). */
export interface InitRequest {
  accessToken?: string | undefined
  envVars?: Record<string, string> | undefined
  defaultUser?: string | undefined
  defaultWorkdir?: string | undefined
  timestamp?: string | undefined
}

export type InitOutcome = 'applied' | 'stale' | 'unauthorized'

/**
 * What the control plane configures through `/init`: the access token, the default env vars,
 * user and workdir. One instance per envd; every service reads it at request time.
 */
export class EnvdState {
  accessToken: string | undefined
  /** Default env vars from `/init`; replaced, never merged, by each `/init`. */
  envVars: Record<string, string> = {}
  /** envd's built-in default before `/init` names the template user (wire contract §3.1). */
  defaultUser = 'root'
  defaultWorkdir: string | undefined
  private lastInit: number | undefined

  /**
   * @param sandboxEnv variables every user process sees beneath the `/init` env vars:
   *   `E2B_SANDBOX=true` plus the sandbox and template IDs when the agent passed them.
   */
  constructor(readonly sandboxEnv: Readonly<Record<string, string>>) {}

  /** Whether `token` is the configured access token (constant time). */
  isAccessToken(token: string | undefined): boolean {
    if (this.accessToken === undefined || token === undefined) return false
    const expected = Buffer.from(this.accessToken)
    const given = Buffer.from(token)
    return expected.length === given.length && timingSafeEqual(expected, given)
  }

  /** The env vars a user process inherits before its own `envs`. */
  defaultEnv(): Record<string, string> {
    return { ...this.sandboxEnv, ...this.envVars }
  }

  /**
   * Applies `/init`. Once a token is set only a request carrying that same token may change
   * anything (the first `/init` sets it, as envd does outside Firecracker). A request whose
   * `timestamp` is older than the last applied one is acknowledged but changes nothing.
   */
  applyInit(request: InitRequest): InitOutcome {
    if (this.accessToken !== undefined && !this.isAccessToken(request.accessToken)) {
      return 'unauthorized'
    }
    const at = request.timestamp === undefined ? undefined : Date.parse(request.timestamp)
    if (at !== undefined && this.lastInit !== undefined && at < this.lastInit) return 'stale'
    if (at !== undefined && !Number.isNaN(at)) this.lastInit = at
    if (request.accessToken !== undefined) this.accessToken = request.accessToken || undefined
    if (request.envVars !== undefined) this.envVars = { ...request.envVars }
    if (request.defaultUser) this.defaultUser = request.defaultUser
    if (request.defaultWorkdir) this.defaultWorkdir = request.defaultWorkdir
    return 'applied'
  }
}
