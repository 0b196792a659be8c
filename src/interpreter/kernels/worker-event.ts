import { z } from 'zod'

/** One line a worker writes on stdout (/work/wt/KERNEL-PROTOCOL.md). */
export const workerEventSchema = z.discriminatedUnion('type', [
  z.object({
    id: z.number(),
    type: z.literal('number_of_executions'),
    execution_count: z.number(),
  }),
  z.object({
    id: z.number(),
    type: z.enum(['stdout', 'stderr']),
    text: z.string(),
    timestamp: z.string(),
  }),
  z.object({
    id: z.number(),
    type: z.literal('result'),
    bundle: z.record(z.string(), z.unknown()),
    is_main_result: z.boolean(),
  }),
  z.object({
    id: z.number(),
    type: z.literal('error'),
    name: z.string(),
    value: z.string(),
    traceback: z.string(),
  }),
  z.object({ id: z.number(), type: z.literal('done'), status: z.enum(['ok', 'error', 'abort']) }),
])
export type WorkerEvent = z.infer<typeof workerEventSchema>
export type DoneStatus = Extract<WorkerEvent, { type: 'done' }>['status']

export const readyEventSchema = z.object({ type: z.literal('ready') })
