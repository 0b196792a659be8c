import type { SandboxTemplate } from '../agent/index.js'
import type { Sandbox, SandboxVolumeMount, Team } from '../store/index.js'
import { newAccessToken, newSandboxID } from './sandbox-ids.js'
import type { NewSandbox } from './schemas/sandbox-requests.js'
import { templateAlias } from './template-names.js'
import type { ResolvedTemplate } from './template-resolution.js'

/** The envd version sandboxes report: the contract's envd (§3) that our envd implements. */
const ENVD_VERSION = '0.6.13'

/**
 * A new sandbox of the resolved template as the store keeps it (§1.3 NewSandbox defaults): the
 * build's sizes, and its env vars overlaid by the request's.
 */
export function newSandbox(
  team: Team,
  body: NewSandbox,
  secure: boolean,
  times: Pick<Sandbox, 'startedAt' | 'endAt' | 'maxEndAt'>,
  { template, build, result }: ResolvedTemplate,
  volumeMounts: SandboxVolumeMount[],
  /** A warm pool's sandbox, which this one becomes. */
  sandboxID = newSandboxID(),
): Sandbox {
  const allowPublicTraffic = body.network?.allowPublicTraffic ?? true
  return {
    ...times,
    templateID: template.templateID,
    cpuCount: build.cpuCount,
    memoryMB: build.memoryMB,
    diskSizeMB: build.diskSizeMB,
    sandboxID,
    teamID: team.id,
    alias: templateAlias(template) ?? null,
    state: 'running',
    metadata: body.metadata ?? {},
    envVars: { ...result.envVars, ...body.envVars },
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
    volumeMounts,
    buildID: build.buildID,
  }
}

/**
 * What the agent starts a sandbox of the resolved template from (§2.4, §2.5): a snapshot's
 * build names the agent's snapshot it restores, which has the build's ID.
 */
export function sandboxTemplate({ template, build, result }: ResolvedTemplate): SandboxTemplate {
  return {
    templateID: template.templateID,
    layers: result.layers,
    defaultUser: result.defaultUser,
    defaultWorkdir: result.defaultWorkdir,
    startCmd: result.startCmd,
    readyCmd: result.readyCmd,
    snapshotID: result.snapshot === undefined ? undefined : build.buildID,
  }
}
