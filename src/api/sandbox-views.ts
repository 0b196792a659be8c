import type { Sandbox } from '../store/index.js'

/** Deprecated constant returned for old clients that build `<id>-<clientID>` (§1.1). */
export const CLIENT_ID = '6532622b'

/** Wire contract §1.3 `Sandbox`: the create/connect reply. */
export function sandboxReply(sandbox: Sandbox) {
  return {
    templateID: sandbox.templateID,
    sandboxID: sandbox.sandboxID,
    alias: sandbox.alias ?? undefined,
    clientID: CLIENT_ID,
    envdVersion: sandbox.envdVersion,
    envdAccessToken: sandbox.envdAccessToken ?? undefined,
    trafficAccessToken: sandbox.trafficAccessToken,
    // Only BYOC clusters set a domain (§1.3); null lets the SDK use its own sandbox URL.
    domain: null,
  }
}

/** Wire contract §1.3 `ListedSandbox`. */
export function listedSandbox(sandbox: Sandbox) {
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
  }
}

/** Wire contract §1.3 `SandboxDetail`. */
export function sandboxDetail(sandbox: Sandbox) {
  return {
    ...listedSandbox(sandbox),
    envdAccessToken: sandbox.envdAccessToken ?? undefined,
    allowInternetAccess: sandbox.allowInternetAccess,
    domain: null,
    network: sandbox.network,
    lifecycle: { autoResume: sandbox.lifecycle.autoResume, onTimeout: sandbox.lifecycle.onTimeout },
  }
}
