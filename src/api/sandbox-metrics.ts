import * as z from 'zod/mini'
import type { Agent } from '../agent/index.js'
import type { Sandbox, SandboxMetricSample } from '../store/index.js'

/** envd's `GET /metrics` record (wire contract §3.3), the fields the API keeps. */
const envdMetricsSchema = z.object({
  ts: z.number(),
  cpu_count: z.number(),
  cpu_used_pct: z.number(),
  mem_total: z.number(),
  mem_used: z.number(),
  mem_cache: z.number(),
  disk_used: z.number(),
  disk_total: z.number(),
})

/** Wire contract §1.3 `SandboxMetric`: a stored sample, its time given both ways. */
export type SandboxMetric = Omit<SandboxMetricSample, 'timestamp'> & {
  timestamp: string
  timestampUnix: number
}

/** A sample that does not answer within this is skipped rather than holding the loop. */
const SAMPLE_TIMEOUT_MS = 5_000

/**
 * One sample from a running sandbox's envd (§3.3 `GET /metrics`); undefined when the sandbox
 * is not running or envd does not answer.
 */
export async function sampleEnvdMetrics(
  agent: Agent,
  sandbox: Sandbox,
): Promise<SandboxMetricSample | undefined> {
  const info = await agent.get(sandbox.sandboxID)
  if (info === undefined || info.state !== 'running') return undefined
  // §3.2: envd wants the sandbox's access token on every route but /health.
  const headers: Record<string, string> =
    sandbox.envdAccessToken === null ? {} : { 'X-Access-Token': sandbox.envdAccessToken }
  const answer = await fetch(`${info.envdURL}/metrics`, {
    headers,
    signal: AbortSignal.timeout(SAMPLE_TIMEOUT_MS),
  }).catch(() => undefined)
  if (answer?.ok !== true) return undefined
  const parsed = envdMetricsSchema.safeParse(await answer.json().catch(() => undefined))
  if (!parsed.success) return undefined
  const sample = parsed.data
  return {
    timestamp: new Date(sample.ts * 1000),
    cpuCount: sample.cpu_count,
    cpuUsedPct: sample.cpu_used_pct,
    memUsed: sample.mem_used,
    memTotal: sample.mem_total,
    memCache: sample.mem_cache,
    diskUsed: sample.disk_used,
    diskTotal: sample.disk_total,
  }
}

/** A stored sample as the contract's `SandboxMetric`. */
export function metricReply(sample: SandboxMetricSample): SandboxMetric {
  const { timestamp, ...figures } = sample
  return {
    timestamp: timestamp.toISOString(),
    timestampUnix: Math.floor(timestamp.getTime() / 1000),
    ...figures,
  }
}
