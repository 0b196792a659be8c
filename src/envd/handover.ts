import { fstatSync, ftruncateSync } from 'node:fs'
import * as z from 'zod/mini'
import { readAt } from './fs/read-at.js'

/**
 * The request header that carries the control secret on the agent's `/init` pushes. Sandbar's
 * own: the E2B SDK never sends `/init`, and the proxy never needs to forward it.
 */
export const ENVD_CONTROL_HEADER = 'x-sandbar-control'

const handoverSchema = z.object({
  /** Authorizes `/init`: only the agent, which keeps it in its root-only record, has it. */
  controlSecret: z.string().check(z.minLength(32)),
  /** The access token of a secure sandbox, in force from envd's first answer. */
  accessToken: z.optional(z.string().check(z.minLength(1))),
})

/**
 * What the agent hands a sandbox's envd before it listens, out of band: through a file
 * descriptor the container's init inherits, never the network or the environment (PID 1's
 * environment stays readable in `/proc/1/environ` for the sandbox's life).
 */
export type EnvdHandover = z.infer<typeof handoverSchema>

/** The handover as the agent writes it into the file behind the descriptor. */
export function encodeHandover(handover: EnvdHandover): string {
  return JSON.stringify(handover)
}

/**
 * Reads the handover from `fd` (an unlinked file the agent wrote), then empties the file: the
 * init keeps the descriptor open, and `/proc/<pid>/fd/<fd>` of either must show
 * nothing afterwards. Throws on anything but a valid handover, so envd never starts unlocked
 * when one was promised.
 */
export function readHandover(fd: number): EnvdHandover {
  // pread from 0: the agent's writes left the shared file offset at the end.
  const text = readAt(fd, fstatSync(fd).size, 0).toString('utf8')
  // Emptied, not closed: the init holds the same file anyway, and a closed stdin would hand
  // its number to the next socket or file envd opens.
  ftruncateSync(fd, 0)
  return handoverSchema.parse(JSON.parse(text))
}
