import * as z from 'zod/mini'
import { MAX_NAME_LENGTH } from '../template-names.js'
import { pageQuerySchema } from './template-requests.js'

const name = z.string().check(z.maxLength(MAX_NAME_LENGTH))

/** §1.3 `SandboxSnapshotRequest`: an optional name, `[team slug/]alias[:tag]`. */
export const snapshotRequestSchema = z.object({ name: z.optional(name) })

/** `GET /snapshots` (§1.2): the source sandbox, a name or ID, and §1.1 pagination. */
export const snapshotListQuerySchema = z.extend(pageQuerySchema, {
  sandboxID: z.optional(z.string()),
  name: z.optional(name),
})

/**
 * §1.3 `SandboxForkRequest`: whole numbers; their ranges are checked by the fork itself, with
 * infra's words.
 */
export const forkRequestSchema = z.object({
  count: z.optional(z.int()),
  timeout: z.optional(z.int()),
})
