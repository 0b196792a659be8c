import type { MessageInitShape } from '@bufbuild/protobuf'
import { ConnectError } from '@connectrpc/connect'
import type { ProcessEventSchema } from '../gen/process/process_pb.js'
import type { ManagedProcess } from './managed-process.js'
import type { OutputQueue } from './output-queue.js'

type ProcessEventInit = MessageInitShape<typeof ProcessEventSchema>

/** envd's keepalive interval when the client names none (wire contract §3.5). */
export const DEFAULT_KEEPALIVE_SECONDS = 90

/** The `Keepalive-Ping-Interval` request header (seconds) as milliseconds. */
export function keepaliveIntervalMs(headers: Headers): number {
  const seconds = Number(headers.get('keepalive-ping-interval'))
  return (Number.isInteger(seconds) && seconds > 0 ? seconds : DEFAULT_KEEPALIVE_SECONDS) * 1000
}

/**
 * The event stream of `Start` and `Connect` (wire contract §3.5): `start{pid}`, then data and
 * keepalives, then `end`, after which the stream closes. The queue is closed however the
 * stream ends; the process itself is never touched, so a client leaving does not kill it.
 */
export async function* processEvents(
  process: ManagedProcess,
  queue: OutputQueue,
  options: { keepaliveMs: number; signal: AbortSignal },
): AsyncGenerator<{ event: ProcessEventInit }> {
  try {
    yield { event: { event: { case: 'start', value: { pid: process.pid } } } }
    for (;;) {
      const next = await queue.next(options.keepaliveMs, options.signal)
      if (next === 'aborted') throw ConnectError.from(options.signal.reason)
      if (next === 'idle') {
        yield { event: { event: { case: 'keepalive', value: {} } } }
      } else if (next.case === 'data') {
        const output = { case: next.kind, value: next.chunk }
        yield { event: { event: { case: 'data', value: { output } } } }
      } else {
        yield { event: { event: { case: 'end', value: next.status } } }
        return
      }
    }
  } finally {
    queue.close()
  }
}
