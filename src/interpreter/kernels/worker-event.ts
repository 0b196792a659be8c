import { z } from 'zod'

/*
 * The protocol between the interpreter server and a worker (one process per context), in JSON
 * lines. The worker writes `{"type":"ready"}` once it takes requests. The server writes requests
 * `{id, code, silent}` to its stdin; the worker runs them one at a time, in order, and writes
 * each one's events to stdout with its id: `number_of_executions` first unless silent, then
 * output, results and errors, and `done` last. SIGINT interrupts the running request, once: the
 * server sends it again until the request is done (kernel.ts). Between requests it does nothing.
 */

/** One line a worker writes on stdout. */
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
