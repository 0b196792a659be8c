import { ENVD_PORT } from '../envd/index.js'

/** The URL of a sandbox's envd, from the host side. */
export function envdURL(sandboxAddress: string): string {
  return `http://${sandboxAddress}:${ENVD_PORT}`
}

/** How often a starting sandbox is checked for having died: a check spawns the runtime CLI. */
const ALIVE_CHECK_INTERVAL_MS = 100

/**
 * Polls envd's `/health` every 5 ms until it answers 204. `stillStarting` is checked every
 * ALIVE_CHECK_INTERVAL_MS, so a container that died fails fast instead of waiting for the
 * deadline, without runtime processes competing with envd's start for the CPU.
 */
export async function waitForEnvd(
  url: string,
  options: { timeoutMs: number; stillStarting: () => Promise<boolean> },
): Promise<void> {
  const started = Date.now()
  const deadline = started + options.timeoutMs
  let nextAliveCheck = started + ALIVE_CHECK_INTERVAL_MS
  for (;;) {
    const healthy = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1_000) }).then(
      (response) => response.status === 204,
      () => false,
    )
    if (healthy) return
    const now = Date.now()
    if (now > deadline)
      throw new Error(`envd at ${url} did not answer within ${options.timeoutMs} ms`)
    if (now >= nextAliveCheck) {
      nextAliveCheck = now + ALIVE_CHECK_INTERVAL_MS
      if (!(await options.stillStarting()))
        throw new Error(`the sandbox stopped before envd answered`)
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** What the agent pushes to envd after boot (wire contract §3.3 `/init`). */
export interface EnvdInit {
  envVars: Record<string, string>
  accessToken?: string | undefined
  defaultUser: string
  defaultWorkdir: string
}

export async function initEnvd(url: string, init: EnvdInit): Promise<void> {
  const response = await fetch(`${url}/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...init, timestamp: new Date().toISOString() }),
  })
  if (response.status !== 204) {
    throw new Error(`envd /init answered ${response.status}: ${await response.text()}`)
  }
}
