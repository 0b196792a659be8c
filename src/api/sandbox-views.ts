import type { SandboxInfo } from '../agent/index.js'
import type { Sandbox } from '../store/index.js'

/** wave2-contracts §2.4: the mounts as the create asked for them, by name. */
const volumeMountsView = (sandbox: Sandbox) =>
  sandbox.volumeMounts.map(({ name, path }) => ({ name, path }))

/** Deprecated constant returned for old clients that build `<id>-<clientID>` (§1.1). */
export const CLIENT_ID = '6532622b'

/**
 * Wire contract §1.3 `Sandbox`: the create/connect reply. `domain` is the service's sandbox
 * domain: the SDK builds `getHost(port)` and, without `E2B_SANDBOX_URL`, envd's URL from it,
 * so a user who set no `E2B_DOMAIN` still reaches this service rather than E2B's cloud.
 */
export function sandboxReply(sandbox: Sandbox, domain: string) {
  return {
    templateID: sandbox.templateID,
    sandboxID: sandbox.sandboxID,
    alias: sandbox.alias ?? undefined,
    clientID: CLIENT_ID,
    envdVersion: sandbox.envdVersion,
    envdAccessToken: sandbox.envdAccessToken ?? undefined,
    trafficAccessToken: sandbox.trafficAccessToken,
    domain,
  }
}

/**
 * Where a paused sandbox is (a Sandbar extension to lists and the detail, which E2B's clients
 * ignore): `memory` frozen in place, `disk` hibernated with CRIU (its checkpoint's size in
 * `checkpointBytes`), `files` paused without memory.
 */
export interface PausedTier {
  pausedTier: 'memory' | 'disk' | 'files'
  checkpointBytes?: number
}

/** A paused sandbox's tier as its agent reports it; nothing for a running one. */
export function pausedTier(info: SandboxInfo | undefined): PausedTier | undefined {
  if (info?.state !== 'paused') return undefined
  if (info.filesOnly) return { pausedTier: 'files' }
  if (info.hibernated) return { pausedTier: 'disk', checkpointBytes: info.checkpointBytes }
  return { pausedTier: 'memory' }
}

/** Wire contract §1.3 `ListedSandbox`, with a paused sandbox's tier. */
export function listedSandbox(sandbox: Sandbox, paused?: PausedTier) {
  return {
    templateID: sandbox.templateID,
    alias: sandbox.alias ?? undefined,
    sandboxID: sandbox.sandboxID,
    clientID: CLIENT_ID,
    startedAt: sandbox.startedAt.toISOString(),
    endAt: sandbox.endAt.toISOString(),
    cpuCount: sandbox.cpuCount,
    memoryMB: sandbox.memoryMB,
    diskSizeMB: sandbox.diskSizeMB,
    metadata: sandbox.metadata,
    state: sandbox.state,
    envdVersion: sandbox.envdVersion,
    volumeMounts: volumeMountsView(sandbox),
    ...(sandbox.state === 'paused' ? paused : undefined),
  }
}

/** Wire contract §1.3 `SandboxDetail`, with the service's domain as in `sandboxReply`. */
export function sandboxDetail(sandbox: Sandbox, domain: string, paused?: PausedTier) {
  return {
    ...listedSandbox(sandbox, paused),
    envdAccessToken: sandbox.envdAccessToken ?? undefined,
    allowInternetAccess: sandbox.allowInternetAccess,
    domain,
    network: sandbox.network,
    lifecycle: { autoResume: sandbox.lifecycle.autoResume, onTimeout: sandbox.lifecycle.onTimeout },
  }
}
