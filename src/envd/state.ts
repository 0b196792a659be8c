import { timingSafeEqual } from 'node:crypto'
import type { EnvdHandover } from './handover.js'

/** The body of `POST /init` that envd acts on (wire contract §3.3). */
export interface InitRequest {
  accessToken?: string | undefined
  envVars?: Record<string, string> | undefined
  defaultUser?: string | undefined
  defaultWorkdir?: string | undefined
  timestamp?: string | undefined
  /**
   * A sandbox restored from another's snapshot takes its own identity (Agent.create from a
   * snapshot): the sandbox ID its processes see from now on, and the control secret the next
   * push must carry. Only the agent pushes these: they need a handover's control secret.
   */
  sandboxID?: string | undefined
  controlSecret?: string | undefined
}

export type InitOutcome = 'applied' | 'stale' | 'unauthorized' | 'future'

/**
 * How far ahead of envd's clock an `/init` timestamp may be. The agent and envd read the same
 * kernel clock, so a push from the future is forged; one second leaves room for a control
 * plane on another NTP-synced machine. A future stamp would make every real push "stale".
 */
export const INIT_CLOCK_SKEW_MS = 1_000

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
  #controlSecret: string | undefined
  #sandboxEnv: Record<string, string>

  /**
   * @param sandboxEnv variables every user process sees beneath the `/init` env vars:
   *   `E2B_SANDBOX=true` plus the sandbox and template IDs when the agent passed them.
   * @param handover the agent's, in a sandbox: envd starts with its access token in force
   *   and `/init` needs its control secret. Without one (`sandbar envd` on a host) the
   *   first `/init` sets the token, as E2B's envd does outside Firecracker.
   */
  constructor(sandboxEnv: Readonly<Record<string, string>>, handover?: EnvdHandover) {
    this.#sandboxEnv = { ...sandboxEnv }
    this.accessToken = handover?.accessToken
    this.#controlSecret = handover?.controlSecret
  }

  /** Whether `token` is the configured access token (constant time). */
  isAccessToken(token: string | undefined): boolean {
    return sameSecret(this.accessToken, token)
  }

  /** Whether `/init` may be pushed with this control header: always, without a handover. */
  mayInit(controlHeader: string | undefined): boolean {
    return this.#controlSecret === undefined || sameSecret(this.#controlSecret, controlHeader)
  }

  /** The env vars a user process inherits before its own `envs`. */
  defaultEnv(): Record<string, string> {
    return { ...this.#sandboxEnv, ...this.envVars }
  }

  /**
   * Applies `/init` (the caller has checked `mayInit`). With a handover the agent is the only
   * pusher and may set any token; without one, once a token is set only a request carrying
   * that same token may change anything (the first `/init` sets it, as envd does outside
   * Firecracker). A `timestamp` beyond INIT_CLOCK_SKEW_MS ahead of `now` is refused; one older
   * than the last applied push is acknowledged but changes nothing.
   */
  applyInit(request: InitRequest, now = Date.now()): InitOutcome {
    const tokenRule = this.#controlSecret === undefined && this.accessToken !== undefined
    if (tokenRule && !this.isAccessToken(request.accessToken)) return 'unauthorized'
    const at = request.timestamp === undefined ? undefined : Date.parse(request.timestamp)
    if (at !== undefined && at > now + INIT_CLOCK_SKEW_MS) return 'future'
    if (at !== undefined && this.lastInit !== undefined && at < this.lastInit) return 'stale'
    if (at !== undefined && !Number.isNaN(at)) this.lastInit = at
    if (request.accessToken !== undefined) this.accessToken = request.accessToken || undefined
    if (request.envVars !== undefined) this.envVars = { ...request.envVars }
    if (request.defaultUser) this.defaultUser = request.defaultUser
    if (request.defaultWorkdir) this.defaultWorkdir = request.defaultWorkdir
    if (this.#controlSecret !== undefined) {
      if (request.sandboxID) this.#sandboxEnv.E2B_SANDBOX_ID = request.sandboxID
      if (request.controlSecret) this.#controlSecret = request.controlSecret
    }
    return 'applied'
  }
}

/** Constant-time equality of two secrets; an unset one equals nothing. */
function sameSecret(expected: string | undefined, given: string | undefined): boolean {
  if (expected === undefined || given === undefined) return false
  const a = Buffer.from(expected)
  const b = Buffer.from(given)
  return a.length === b.length && timingSafeEqual(a, b)
}
