import type { OsUser } from '../users.js'

/** Debian's default PATH, for when envd itself runs without one. */
export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

export interface ProcessEnvInput {
  /** envd's own PATH, if it has one. */
  envdPath: string | undefined
  user: Pick<OsUser, 'name' | 'home'>
  /** envd's default env: `E2B_SANDBOX*` plus the `/init` env vars. */
  defaults: Readonly<Record<string, string>>
  /** The request's `envs`. */
  request: Readonly<Record<string, string>>
}

/**
 * A user process's environment, in the contract's precedence (wire contract §3.5): PATH, then
 * the target user's HOME, USER and LOGNAME, then envd's defaults, then the request's envs; a
 * later source overrides an earlier one. Nothing else of envd's own environment leaks through.
 */
export function processEnv(input: ProcessEnvInput): Record<string, string> {
  return {
    PATH: input.envdPath || DEFAULT_PATH,
    HOME: input.user.home,
    USER: input.user.name,
    LOGNAME: input.user.name,
    ...input.defaults,
    ...input.request,
  }
}
