import * as z from 'zod/mini'

/**
 * `NewVolume` (wave2-contracts §2.1) with Sandbar's `sizeMB`: the volume's size limit in MiB
 * (default `sandbar serve --volume-size-mb`). The name's pattern is checked by the service,
 * whose refusal has the contract's own text.
 */
export const newVolumeSchema = z.object({
  name: z.string(),
  sizeMB: z.optional(z.number()),
})

/** `uint32` query values as the SDK sends them: decimal digits. */
const uint32 = z.pipe(
  z.string().check(z.regex(/^\d{1,10}$/, 'must be a whole number')),
  z.pipe(
    z.transform((text: string) => Number(text)),
    // 2^32 - 1 is chown's "leave as is": not an ID anyone can set.
    z.number().check(z.maximum(0xfffffffe, 'must be below 4294967295')),
  ),
)

const volumePath = z.string().check(
  z.minLength(1, 'path is required'),
  z.refine((path) => !path.includes('\0'), 'path cannot hold a NUL byte'),
)

/** The query every content route takes (wave2-contracts §2.3). */
export const contentPathQuerySchema = z.object({ path: volumePath })

/** `POST .../dir` and `PUT .../file`: who owns what is made, its mode, and `force`. */
export const contentCreateQuerySchema = z.object({
  path: volumePath,
  uid: z.optional(uint32),
  gid: z.optional(uint32),
  mode: z.optional(uint32),
  force: z.optional(z.enum(['true', 'false'])),
})

/** `GET .../dir`: `depth` is checked by the route, whose refusal has the contract's text. */
export const contentListQuerySchema = z.object({
  path: volumePath,
  depth: z.optional(z.string()),
})

/** `PATCH .../path`'s body; an omitted field is left as it is. */
export const contentAttributesSchema = z.object({
  uid: z.optional(z.int().check(z.minimum(0), z.maximum(0xfffffffe))),
  gid: z.optional(z.int().check(z.minimum(0), z.maximum(0xfffffffe))),
  mode: z.optional(z.int().check(z.minimum(0), z.maximum(0xffffffff))),
})
