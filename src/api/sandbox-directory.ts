import type { Agent } from '../agent/index.js'
import type { ProxiedSandbox, SandboxDirectory } from '../proxy/index.js'
import { isListed, type Sandbox, type Store } from '../store/index.js'
import type { SandboxService } from './sandbox-service.js'

/** §4.4: a sandbox woken by traffic runs for the SDK's default timeout, 5 minutes. */
const AUTO_RESUME_TIMEOUT_S = 300

/** The proxy's view of sandboxes: the store says who may reach them, the agent where they are. */
export function sandboxDirectory(
  store: Store,
  agent: Agent,
  service: SandboxService,
): SandboxDirectory {
  const proxied = async (sandbox: Sandbox): Promise<ProxiedSandbox | undefined> => {
    // A sandbox being created or removed is not handed out, as the API does not list it.
    if (!isListed(sandbox.state)) return undefined
    const info = await agent.get(sandbox.sandboxID)
    if (info === undefined) return undefined
    return {
      sandboxID: sandbox.sandboxID,
      address: info.address,
      state: sandbox.state,
      trafficAccessToken: sandbox.trafficAccessToken ?? undefined,
      envdAccessToken: sandbox.envdAccessToken ?? undefined,
      // §4.4: traffic never boots a sandbox paused without memory; its connect does.
      autoResume: sandbox.lifecycle.autoResume && !info.filesOnly,
      maskRequestHost: sandbox.network.maskRequestHost,
    }
  }
  return {
    async lookup(sandboxID) {
      const sandbox = await store.getSandbox(sandboxID)
      return sandbox === undefined ? undefined : proxied(sandbox)
    },
    async resume(sandboxID) {
      const sandbox = await proxied(await service.resume(sandboxID, AUTO_RESUME_TIMEOUT_S))
      if (sandbox === undefined) throw new Error(`sandbox ${sandboxID} vanished while resuming`)
      return sandbox
    },
  }
}
