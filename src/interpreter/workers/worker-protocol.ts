import { createInterface } from 'node:readline'
import { z } from 'zod'

/** The worker side of the JSON-lines protocol (described in kernels/worker-event.ts). */
export const requestSchema = z.object({ id: z.number(), code: z.string(), silent: z.boolean() })
export type WorkerRequest = z.infer<typeof requestSchema>

export type Emit = (event: Record<string, unknown>) => void

/** Sends protocol lines with stdout's real `write`, which user code cannot reach. */
export function protocolEmitter(): Emit {
  const write = process.stdout.write.bind(process.stdout)
  return (event) => write(`${JSON.stringify(event)}\n`)
}

/** Reads requests from stdin and runs them one at a time, in order. */
export function serveRequests(run: (request: WorkerRequest) => Promise<void>): void {
  let queue = Promise.resolve()
  createInterface({ input: process.stdin }).on('line', (line) => {
    const parsed = requestSchema.safeParse(JSON.parse(line))
    if (parsed.success) queue = queue.then(() => run(parsed.data))
  })
}

export const timestamp = () => new Date().toISOString()
