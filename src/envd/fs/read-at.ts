import { readSync } from 'node:fs'

/**
 * Up to `length` bytes of `fd` from `position` (pread, so the descriptor's offset stays),
 * fewer where the file ends sooner.
 */
export function readAt(fd: number, length: number, position: number): Buffer {
  const bytes = Buffer.allocUnsafe(length)
  let done = 0
  while (done < length) {
    const read = readSync(fd, bytes, done, length - done, position + done)
    if (read === 0) break
    done += read
  }
  return bytes.subarray(0, done)
}
