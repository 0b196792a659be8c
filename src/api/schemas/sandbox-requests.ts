import * as z from 'zod/mini'

const stringMap = z.record(z.string(), z.string())

/** Wire contract §1.3 `SandboxNetworkConfig` (the fields this server acts on). */
const networkConfig = z.object({
  allowPublicTraffic: z.optional(z.boolean()),
  allowOut: z.optional(z.array(z.string())),
  denyOut: z.optional(z.array(z.string())),
  maskRequestHost: z.optional(z.string()),
})

/**
 * `NewSandbox` (wire contract §1.3) and `NewSandboxV2` (Addendum: the same without `secure`).
 * Unknown fields (`mcp`, `iam`, `volumeMounts`) are tolerated, as the SDK may send them.
 */
export const newSandboxSchema = z.object({
  templateID: z.string(),
  timeout: z.optional(z.int()),
  autoPause: z.optional(z.boolean()),
  autoPauseMemory: z.optional(z.boolean()),
  autoResume: z.optional(z.object({ enabled: z.boolean() })),
  secure: z.optional(z.boolean()),
  allow_internet_access: z.optional(z.boolean()),
  network: z.optional(networkConfig),
  metadata: z.optional(z.nullable(stringMap)),
  envVars: z.optional(z.nullable(stringMap)),
})
export type NewSandbox = z.infer<typeof newSandboxSchema>

/** `ConnectSandbox` (§1.3: `timeout` required) and its v2 form (Addendum: optional). */
export const connectSchema = z.object({
  timeout: z.optional(z.int()),
  memory: z.optional(z.boolean()),
})
export type ConnectRequest = z.infer<typeof connectSchema>

/** `SandboxTimeoutRequest` (§1.3). */
export const timeoutSchema = z.object({ timeout: z.int() })

/** `SandboxPauseRequest` (§1.3); the body is optional. */
export const pauseSchema = z.object({ memory: z.optional(z.boolean()) })

/** `GET /v2/sandboxes` query (wire contract §1.1 pagination, §1.2 filters). */
export const listQuerySchema = z.object({
  state: z.optional(z.string()),
  metadata: z.optional(z.string()),
  order: z.optional(z.enum(['asc', 'desc'])),
  startedAfter: z.optional(z.iso.datetime({ offset: true })),
  template: z.optional(z.string()),
  limit: z.optional(z.string().check(z.regex(/^\d+$/))),
  nextToken: z.optional(z.string()),
})
export type ListQuery = z.infer<typeof listQuerySchema>

/** `SandboxRefreshRequest` (§1.3): `duration` 0..3600 s; the body is optional. */
export const refreshSchema = z.object({
  duration: z.optional(z.int().check(z.gte(0), z.lte(3600))),
})

/** `ResumedSandbox` (§1.3, legacy resume); the body is optional, `autoPause` deprecated. */
export const resumeSchema = z.object({ timeout: z.optional(z.int()) })

/**
 * `SandboxNetworkUpdateConfig` (§1.3): omitted lists are cleared. `egressProxy` and `rules`
 * are tolerated and not acted on: Sandbar has no egress proxy (§4.5).
 */
export const networkUpdateSchema = z.object({
  allowOut: z.optional(z.array(z.string())),
  denyOut: z.optional(z.array(z.string())),
  allow_internet_access: z.optional(z.boolean()),
})

/** `GET /sandboxes/{id}/metrics` query (§1.2): unix seconds, int64 ≥ 0. */
export const metricsRangeSchema = z.object({
  start: z.optional(z.string().check(z.regex(/^\d+$/))),
  end: z.optional(z.string().check(z.regex(/^\d+$/))),
})

/** `GET /sandboxes/metrics` query (§1.2): `sandbox_ids` required, comma list. */
export const metricsBatchSchema = z.object({ sandbox_ids: z.string() })

/** `GET /sandboxes` (v1) query (§1.2). */
export const listV1QuerySchema = z.object({ metadata: z.optional(z.string()) })

/** `GET /sandboxes/{id}/logs` query (§1.2): `start` in unix milliseconds, `limit`. */
export const logsV1QuerySchema = z.object({
  start: z.optional(z.string().check(z.regex(/^\d+$/))),
  limit: z.optional(z.string().check(z.regex(/^\d+$/))),
})

/** `GET /v2/sandboxes/{id}/logs` query (§1.2): cursor in unix ms, limit 0..1000, filters. */
export const logsV2QuerySchema = z.object({
  cursor: z.optional(z.string().check(z.regex(/^\d+$/))),
  limit: z.optional(
    z.string().check(
      z.regex(/^\d+$/),
      z.refine((limit) => Number(limit) <= 1000, 'limit must be at most 1000'),
    ),
  ),
  direction: z.optional(z.enum(['forward', 'backward'])),
  level: z.optional(z.enum(['debug', 'info', 'warn', 'error'])),
  search: z.optional(z.string().check(z.maxLength(256))),
})
