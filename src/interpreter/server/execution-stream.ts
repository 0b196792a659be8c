import type { WorkerEvent } from '../kernels/worker-event.js'
import { resultFields } from './result-fields.js'

/** A worker event as a line of the `/execute` stream (wire contract §1.4). */
export function wireEvent(event: WorkerEvent): Record<string, unknown> | undefined {
  switch (event.type) {
    case 'number_of_executions':
      return { type: event.type, execution_count: event.execution_count }
    case 'stdout':
    case 'stderr':
      return { type: event.type, text: event.text, timestamp: event.timestamp }
    case 'result':
      return { type: 'result', ...resultFields(event.bundle), is_main_result: event.is_main_result }
    case 'error':
      return { type: 'error', name: event.name, value: event.value, traceback: event.traceback }
    case 'done':
      return undefined
  }
}

export const abortedEvent = {
  type: 'error',
  name: 'ExecutionAborted',
  value: 'Execution was aborted',
  traceback: '',
}

const encoder = new TextEncoder()

/**
 * The NDJSON body: `run` writes events; a `keepalive` goes out after every `keepaliveMs`
 * without output, and `end_of_execution` always ends the stream. `signal` aborts when the
 * client goes away, which the run turns into an interrupt.
 */
export function executionStream(
  keepaliveMs: number,
  run: (send: (line: object) => void, signal: AbortSignal) => Promise<void>,
): ReadableStream<Uint8Array> {
  const gone = new AbortController()
  let timer: NodeJS.Timeout | undefined
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (line: object) => {
        if (gone.signal.aborted) return
        controller.enqueue(encoder.encode(`${JSON.stringify(line)}\n`))
        timer?.refresh()
      }
      timer = setInterval(() => send({ type: 'keepalive' }), keepaliveMs)
      run(send, gone.signal)
        .catch((error: unknown) =>
          send({
            type: 'error',
            name: 'UnexpectedEndOfExecution',
            value: error instanceof Error ? error.message : String(error),
            traceback: '',
          }),
        )
        .finally(() => {
          clearInterval(timer)
          send({ type: 'end_of_execution' })
          if (!gone.signal.aborted) controller.close()
        })
    },
    cancel() {
      clearInterval(timer)
      gone.abort()
    },
  })
}
