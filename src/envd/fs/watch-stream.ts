import { create } from '@bufbuild/protobuf'
import {
  type WatchDirResponse,
  WatchDirResponse_KeepAliveSchema,
  WatchDirResponse_StartEventSchema,
  WatchDirResponseSchema,
} from '../gen/filesystem/filesystem_pb.js'
import type { WatchSession } from './watch-session.js'

/** Wire contract §3.4: envd's keepalive period when the client names none. */
const DEFAULT_KEEPALIVE_SECONDS = 90

/**
 * The keepalive period of a stream in milliseconds, from the `Keepalive-Ping-Interval` request
 * header (seconds; the SDK sends `50`). Absent, unparsable or non-positive values mean the default.
 */
export function keepaliveIntervalMs(header: string | null): number {
  const seconds = Number(header?.trim() || Number.NaN)
  return (Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_KEEPALIVE_SECONDS) * 1000
}

/**
 * The WatchDir response stream (wire contract §3.4): `start` first, then each filesystem event as
 * it is classified, and `keepalive` after `keepaliveMs` without one. Ends when `signal` aborts
 * (the client went away) and always closes the session, releasing its watchers.
 */
export async function* watchDirStream(
  session: WatchSession,
  keepaliveMs: number,
  signal: AbortSignal,
): AsyncGenerator<WatchDirResponse> {
  try {
    yield create(WatchDirResponseSchema, {
      event: { case: 'start', value: create(WatchDirResponse_StartEventSchema) },
    })
    while (!signal.aborted) {
      await session.waitForEvents(keepaliveMs, signal)
      if (signal.aborted) return
      const events = session.take()
      if (events.length === 0) {
        yield create(WatchDirResponseSchema, {
          event: { case: 'keepalive', value: create(WatchDirResponse_KeepAliveSchema) },
        })
      }
      for (const event of events) {
        yield create(WatchDirResponseSchema, { event: { case: 'filesystem', value: event } })
      }
    }
  } finally {
    session.close()
  }
}
