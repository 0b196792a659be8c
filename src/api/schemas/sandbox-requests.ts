import * as z from 'zod/mini'

/**
 * Size bounds on what a create stores and hands to every sandbox process. The contract names
 * none; these leave room for any real use (Linux caps one environment string at 128 KiB and
 * the whole environment near 2 MiB) while one request can no longer fill memory or the store.
 * The API's body limit (app.ts) bounds the total.
 */
export const REQUEST_LIMITS = {
  envVars: { entries: 512, keyLength: 256, valueLength: 65_536 },
  metadata: { entries: 100, keyLength: 256, valueLength: 4096 },
  /** Entries in each of `allowOut` and `denyOut`: each becomes an nftables set element. */
  egressEntries: 256,
} as const

/**
 * A string → string map of at most `entries` pairs, with bounded keys and values; `keyRule`
 * adds what a key may not contain. Checked on the whole map, so each refusal names its rule.
 */
function boundedMap(
  name: string,
  limits: { entries: number; keyLength: number; valueLength: number },
  keyRule?: { pattern: RegExp; message: string },
) {
  const keys = (map: Record<string, string>) => Object.keys(map)
  return z.record(z.string(), z.string()).check(
    z.refine(
      (map) => keys(map).length <= limits.entries,
      `${name} must have at most ${limits.entries} entries`,
    ),
    z.refine(
      (map) => keys(map).every((key) => key.length > 0 && key.length <= limits.keyLength),
      `${name} keys must be 1 to ${limits.keyLength} characters long`,
    ),
    z.refine(
      (map) => Object.values(map).every((value) => value.length <= limits.valueLength),
      `${name} values must be at most ${limits.valueLength} characters long`,
    ),
    z.refine(
      (map) => keyRule === undefined || keys(map).every((key) => keyRule.pattern.test(key)),
      keyRule?.message ?? '',
    ),
  )
}

/** An environment variable name: no `=` (it ends the name) and no NUL (it ends the string). */
const envVarsMap = boundedMap('envVars', REQUEST_LIMITS.envVars, {
  pattern: /^[^=\0]*$/,
  message: 'envVars keys must not contain = or NUL',
})
const metadataMap = boundedMap('metadata', REQUEST_LIMITS.metadata)

const egressList = z
  .array(z.string())
  .check(
    z.maxLength(
      REQUEST_LIMITS.egressEntries,
      `at most ${REQUEST_LIMITS.egressEntries} entries per egress list`,
    ),
  )

/** §1.3 `SandboxEgressProxyConfig` (SOCKS5); nullable, null meaning none. */
const egressProxy = z.nullable(
  z.object({
    address: z.string(),
    username: z.optional(z.string()),
    password: z.optional(z.string()),
  }),
)

/** §1.3 `rules`: domain → `SandboxNetworkRule[]`, read only to see whether any are asked for. */
const networkRules = z.nullable(z.record(z.string(), z.array(z.unknown())))

/**
 * Wire contract §1.3 `SandboxNetworkConfig`, with e2b 2.51's `httpsPorts`. `egressProxy`,
 * `rules` and `httpsPorts` are parsed so that asking for them is refused by name
 * (unsupported-fields.ts), not dropped.
 */
const networkConfig = z.object({
  allowPublicTraffic: z.optional(z.boolean()),
  allowOut: z.optional(egressList),
  denyOut: z.optional(egressList),
  maskRequestHost: z.optional(z.string()),
  egressProxy: z.optional(egressProxy),
  rules: z.optional(networkRules),
  httpsPorts: z.optional(z.nullable(z.array(z.int()))),
})

/**
 * `NewSandbox` (wire contract §1.3) and `NewSandboxV2` (Addendum: the same without `secure`).
 * `mcp` and `iam` are parsed so that asking for them is refused by name
 * (unsupported-fields.ts); other unknown fields are tolerated, as newer SDKs may send them.
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
  metadata: z.optional(z.nullable(metadataMap)),
  envVars: z.optional(z.nullable(envVarsMap)),
  /** §1.3 `Mcp`: an object of any properties, nullable. */
  mcp: z.optional(z.nullable(z.record(z.string(), z.unknown()))),
  /** §1.3 `SandboxIam`: named workload identity tokens. */
  iam: z.optional(z.nullable(z.object({ tokens: z.optional(z.record(z.string(), z.unknown())) }))),
  /** §1.3, wave2-contracts §2.4: `[{name, path}]`, volumes by name. */
  volumeMounts: z.optional(z.nullable(z.array(z.object({ name: z.string(), path: z.string() })))),
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
export type PauseRequest = z.infer<typeof pauseSchema>

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
 * are parsed so that asking for them is refused by name: Sandbar has no egress proxy (§4.5).
 */
export const networkUpdateSchema = z.object({
  allowOut: z.optional(egressList),
  denyOut: z.optional(egressList),
  allow_internet_access: z.optional(z.boolean()),
  egressProxy: z.optional(egressProxy),
  rules: z.optional(networkRules),
})
export type NetworkUpdate = z.infer<typeof networkUpdateSchema>

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
/** `GET /sandboxes/{id}/changes`: JSON unless `format=tar`. */
export const changesQuerySchema = z.object({
  format: z.optional(z.enum(['json', 'tar'])),
})

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
