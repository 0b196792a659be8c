import * as z from 'zod/mini'
import { MAX_NAME_LENGTH } from '../template-names.js'

/** Bounds the contract leaves open, so one request cannot fill the store or a build's queue. */
export const TEMPLATE_REQUEST_LIMITS = {
  tags: 64,
  steps: 1024,
  stepArgs: 1024,
  commandLength: 65_536,
} as const

const tagList = z.array(z.string()).check(z.maxLength(TEMPLATE_REQUEST_LIMITS.tags))
const name = z.string().check(z.maxLength(MAX_NAME_LENGTH))

/** `TemplateBuildRequestV3` (§1.3): `name` may carry `:tag`; `alias`, `teamID` deprecated. */
export const templateRequestV3Schema = z.object({
  name: z.optional(name),
  alias: z.optional(name),
  tags: z.optional(tagList),
  teamID: z.optional(z.string()),
  cpuCount: z.optional(z.int()),
  memoryMB: z.optional(z.int()),
})
export type TemplateRequestV3 = z.infer<typeof templateRequestV3Schema>

/** `TemplateBuildRequestV2` (§1.3, deprecated): `alias` required. */
export const templateRequestV2Schema = z.object({
  alias: name,
  teamID: z.optional(z.string()),
  cpuCount: z.optional(z.int()),
  memoryMB: z.optional(z.int()),
})

/** `FromImageRegistry` (§1.3), by its `type`. */
const registrySchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('registry'), username: z.string(), password: z.string() }),
  z.object({
    type: z.literal('aws'),
    awsAccessKeyId: z.string(),
    awsSecretAccessKey: z.string(),
    awsRegion: z.string(),
  }),
  z.object({ type: z.literal('gcp'), serviceAccountJson: z.string() }),
])

/** `TemplateStep` (§1.3); the SDKs' extra properties (`forceUpload`, ...) are dropped. */
const stepSchema = z.object({
  type: z.string(),
  args: z.optional(
    z
      .array(z.string().check(z.maxLength(TEMPLATE_REQUEST_LIMITS.commandLength)))
      .check(z.maxLength(TEMPLATE_REQUEST_LIMITS.stepArgs)),
  ),
  filesHash: z.optional(z.nullable(z.string())),
  force: z.optional(z.nullable(z.boolean())),
})

const command = z.optional(
  z.nullable(z.string().check(z.maxLength(TEMPLATE_REQUEST_LIMITS.commandLength))),
)

/** `TemplateBuildStartV2` (§1.3): which of `fromImage`/`fromTemplate` is set is checked later. */
export const buildStartSchema = z.object({
  fromImage: z.optional(z.nullable(z.string())),
  fromTemplate: z.optional(z.nullable(z.string())),
  fromImageRegistry: z.optional(z.nullable(registrySchema)),
  force: z.optional(z.nullable(z.boolean())),
  steps: z.optional(
    z.nullable(z.array(stepSchema).check(z.maxLength(TEMPLATE_REQUEST_LIMITS.steps))),
  ),
  startCmd: command,
  readyCmd: command,
})
export type BuildStart = z.infer<typeof buildStartSchema>

const count = z.string().check(z.regex(/^\d+$/))
const level = z.optional(z.enum(['debug', 'info', 'warn', 'error']))
const pageLimit = z.optional(
  count.check(z.refine((limit) => Number(limit) <= 100, 'limit must be at most 100')),
)

/** `GET .../status` query (§1.2): `logsOffset` ≥ 0, `limit` 0..100, `level`. */
export const buildStatusQuerySchema = z.object({
  logsOffset: z.optional(count),
  limit: pageLimit,
  level,
})

/** `GET .../logs` query (§1.2): `cursor` in unix ms, `limit` 0..100, `direction`, `level`, `source`. */
export const buildLogsQuerySchema = z.object({
  cursor: z.optional(count),
  limit: pageLimit,
  direction: z.optional(z.enum(['forward', 'backward'])),
  level,
  source: z.optional(z.enum(['temporary', 'persistent'])),
})

/** `GET /v2/templates` and `GET /templates/{id}` (builds) pagination (§1.1): limit 1..100. */
export const pageQuerySchema = z.object({
  teamID: z.optional(z.string()),
  limit: z.optional(
    count.check(
      z.refine((limit) => Number(limit) >= 1 && Number(limit) <= 100, 'limit must be 1 to 100'),
    ),
  ),
  nextToken: z.optional(z.string()),
})

/** `TemplateUpdateRequest` (§1.3). */
export const templateUpdateSchema = z.object({ public: z.optional(z.boolean()) })

/** `AssignTemplateTagsRequest` (§1.3). */
export const assignTagsSchema = z.object({ target: name, tags: tagList })

/** `DeleteTemplateTagsRequest` (§1.3). */
export const deleteTagsSchema = z.object({ name, tags: tagList })
