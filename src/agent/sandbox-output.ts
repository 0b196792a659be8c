import { statSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { errnoCode } from '../errno-code.js'
import type { SandboxOutput } from './index.js'

/** The most read at once; a sandbox that wrote more is read on the next call. */
const MAX_READ_BYTES = 1024 * 1024
const NEWLINE = 0x0a

/**
 * The complete lines of `file` from byte `from` on, and the byte after the last of them. A
 * line still being written stays for the next read, unless it alone fills MAX_READ_BYTES.
 */
export async function readOutputLines(file: string, from: number): Promise<SandboxOutput> {
  // Most calls (the telemetry pass, every few seconds per sandbox) find nothing new. A stat
  // says so in microseconds, where opening the file asynchronously takes thread-pool trips.
  const size = statSync(file, { throwIfNoEntry: false })?.size ?? 0
  if (size <= from) return { lines: [], bytesRead: from }
  const handle = await open(file, 'r').catch((error: unknown) => {
    if (errnoCode(error) === 'ENOENT') return undefined
    throw error
  })
  if (handle === undefined) return { lines: [], bytesRead: from }
  try {
    const size = (await handle.stat()).size
    const length = Math.min(Math.max(size - from, 0), MAX_READ_BYTES)
    if (length === 0) return { lines: [], bytesRead: from }
    const buffer = Buffer.alloc(length)
    const { bytesRead } = await handle.read(buffer, 0, length, from)
    const chunk = buffer.subarray(0, bytesRead)
    const lastNewline = chunk.lastIndexOf(NEWLINE)
    const end = lastNewline >= 0 ? lastNewline + 1 : bytesRead === MAX_READ_BYTES ? bytesRead : 0
    const lines = chunk
      .subarray(0, end)
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '')
    return { lines, bytesRead: from + end }
  } finally {
    await handle.close()
  }
}
