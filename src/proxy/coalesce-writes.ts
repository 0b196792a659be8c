import type { OutgoingMessage } from 'node:http'
import type { Readable } from 'node:stream'

/**
 * Holds the writes to `destination`'s connection while `source` delivers what came in one
 * read, and sends them as one when that is done (at the end of the event loop's turn): an
 * answer's status line with the first bytes that came with it, its last bytes with its end.
 * Each write is a system call, a TLS record and a wake-up of the reader. The connection is held,
 * not the message, which lets go of its connection once finished.
 */
export function coalesceWrites(source: Readable, destination: OutgoingMessage): void {
  const hold = (): void => {
    const connection = destination.socket
    if (connection === null || connection.writableCorked > 0) return
    connection.cork()
    setImmediate(() => connection.uncork())
  }
  hold()
  source.on('data', hold)
}
