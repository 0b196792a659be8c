import { z } from 'zod'
import type { Logger } from '../../logger.js'

const envsSchema = z.record(z.string(), z.string())

/**
 * The sandbox-level env vars from envd `GET /envs`, read with the client's access token
 * (wire contract §1.8). Unreachable envd means none: the run goes ahead without them.
 */
export async function fetchSandboxEnvs(
  envdUrl: string,
  accessToken: string | undefined,
  logger: Logger,
): Promise<Record<string, string>> {
  try {
    const response = await fetch(new URL('/envs', envdUrl), {
      headers: accessToken === undefined ? {} : { 'X-Access-Token': accessToken },
    })
    if (!response.ok) throw new Error(`envd answered ${response.status}`)
    return envsSchema.parse(await response.json())
  } catch (error) {
    logger.warn({ error }, 'could not read the sandbox env vars from envd')
    return {}
  }
}
