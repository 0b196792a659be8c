import { readFile } from 'node:fs/promises'
import { errnoCode } from '../errno-code.js'
import { SANDBOX_IDS_BASE } from './user-namespace.js'

/** One line of /etc/subuid or /etc/subgid (subuid(5)): `name:start:count`. */
export interface SubordinateRange {
  name: string
  start: number
  count: number
}

/**
 * The host IDs Sandbar gives sandboxes: their ID ranges, then (from OWNER_BASE) their
 * namespaces' owners, up to the last valid ID (2^32 - 1 is the kernel's "no ID").
 */
export const SANDBOX_HOST_IDS = { start: SANDBOX_IDS_BASE, end: 2 ** 32 - 1 }

/** Parses subuid(5) text; comments, blank and malformed lines are skipped. Pure. */
export function parseSubordinateRanges(text: string): SubordinateRange[] {
  return text.split('\n').flatMap((line) => {
    const match = /^([^:#\s][^:]*):(\d+):(\d+)\s*$/.exec(line)
    if (match?.[1] === undefined || match[2] === undefined || match[3] === undefined) return []
    return [{ name: match[1], start: Number(match[2]), count: Number(match[3]) }]
  })
}

/**
 * Refuses to run when /etc/subuid or /etc/subgid grants a host user any ID Sandbar gives to
 * sandboxes: that user's own user namespaces could then map a sandbox's IDs and own its files.
 */
export async function checkSubordinateIDs(
  files: readonly string[] = ['/etc/subuid', '/etc/subgid'],
): Promise<void> {
  for (const file of files) {
    const text = await readFile(file, 'utf8').catch((error: unknown) => {
      if (errnoCode(error) === 'ENOENT') return ''
      throw error
    })
    for (const range of parseSubordinateRanges(text)) {
      const end = range.start + range.count
      if (range.start < SANDBOX_HOST_IDS.end && SANDBOX_HOST_IDS.start < end) {
        throw new Error(
          `${file} grants '${range.name}' host IDs ${range.start}-${end - 1}, which overlap the IDs Sandbar gives sandboxes (${SANDBOX_HOST_IDS.start}-${SANDBOX_HOST_IDS.end - 1}); move that range below ${SANDBOX_HOST_IDS.start}`,
        )
      }
    }
  }
}
