import http from 'node:http'
import * as z from 'zod/mini'
import type { SandboxMetricSample } from '../store/index.js'

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
 * The connections samples go over, kept open between passes. A new connection costs envd
 * several times what the sample itself does, and fetch's pool lets idle connections go after
 * 4 s, sooner than the telemetry loop comes back.
 */
const envdConnections = new http.Agent({ keepAlive: true })

/**
 * One sample from a sandbox's envd (§3.3 `GET /metrics`), with the sandbox's access token
 * (§3.2: envd wants it on every route but /health); undefined when envd does not answer.
 */
export async function sampleEnvdMetrics(
  envdURL: string,
  accessToken: string | null,
): Promise<SandboxMetricSample | undefined> {
  const headers: Record<string, string> =
    accessToken === null ? {} : { 'X-Access-Token': accessToken }
  const parsed = envdMetricsSchema.safeParse(await getJson(`${envdURL}/metrics`, headers))
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

/** The JSON body of a 200 answer to GET `url`; undefined for any other outcome. */
function getJson(url: string, headers: Record<string, string>): Promise<unknown> {
  return new Promise((resolve) => {
    const request = http.get(
      url,
      { agent: envdConnections, headers, timeout: SAMPLE_TIMEOUT_MS },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume()
          resolve(undefined)
          return
        }
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('error', () => resolve(undefined))
        response.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')))
          } catch {
            resolve(undefined)
          }
        })
      },
    )
    request.on('timeout', () => request.destroy())
    request.on('error', () => resolve(undefined))
  })
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
