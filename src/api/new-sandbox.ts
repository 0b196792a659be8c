import type { Sandbox, Team } from '../store/index.js'
import { apiErrors } from './errors.js'
import { newAccessToken, newSandboxID } from './sandbox-ids.js'
import type { NewSandbox } from './schemas/sandbox-requests.js'

/** The only template this server knows so far, with E2B's base sizes. */
export const BASE_TEMPLATE = { templateID: 'base', cpuCount: 2, memoryMB: 512, diskSizeMB: 512 }
/** The envd version sandboxes report: the contract's envd (§3) that our envd implements. */
const ENVD_VERSION = '0.6.13'

/** The sizes a sandbox of the base template gets. */
export type BaseTemplate = typeof BASE_TEMPLATE

/** A new sandbox of the base template as the store keeps it (§1.3 NewSandbox defaults). */
export function newSandbox(
  team: Team,
  body: NewSandbox,
  secure: boolean,
  times: Pick<Sandbox, 'startedAt' | 'endAt' | 'maxEndAt'>,
): Sandbox {
  const allowPublicTraffic = body.network?.allowPublicTraffic ?? true
  return {
    ...BASE_TEMPLATE,
    ...times,
    sandboxID: newSandboxID(),
    teamID: team.id,
    alias: BASE_TEMPLATE.templateID,
    state: 'running',
    metadata: body.metadata ?? {},
    envVars: body.envVars ?? {},
    envdAccessToken: secure ? newAccessToken() : null,
    // §4.6: a private sandbox's non-envd ports need `e2b-traffic-access-token`.
    trafficAccessToken: allowPublicTraffic ? null : newAccessToken(),
    allowInternetAccess: body.allow_internet_access ?? null,
    network: {
      allowOut: body.network?.allowOut ?? [],
      denyOut: body.network?.denyOut ?? [],
      allowPublicTraffic,
      maskRequestHost: body.network?.maskRequestHost,
    },
    lifecycle: {
      onTimeout: body.autoPause === true ? 'pause' : 'kill',
      autoResume: body.autoResume?.enabled ?? false,
      keepMemory: body.autoPauseMemory ?? true,
    },
    envdVersion: ENVD_VERSION,
  }
}

/** Template resolution (§1.4), for the one template there is: `base`, optionally `:default`. */
export function resolveTemplate(reference: string): BaseTemplate {
  const name = reference.trim().toLowerCase()
  if (name === 'base' || name === 'base:default') return BASE_TEMPLATE
  throw apiErrors.templateNotFound(reference)
}
