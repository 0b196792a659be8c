import type { Selectable } from 'kysely'
import type { SandboxTable } from './schema.js'

type SandboxRow = Selectable<SandboxTable>

/**
 * `sandboxes` rows kept in memory, for a database this process alone writes: the embedded
 * SQLite file, which one `sandbar serve` owns with its data directory. The proxy reads a
 * sandbox's row at every request it forwards, and that query was a fifth of the proxy's CPU
 * per request. PostgreSQL is shared by several api instances, so it gets no cache.
 *
 * Every write drops the row it touched. A read keeps what it loaded only when no write ended
 * while it waited, since the row it read may be older than that write. Misses are not kept:
 * the IDs a client asks for are its own to choose.
 */
export class SandboxRowCache {
  private readonly rows = new Map<string, SandboxRow>()
  /** Writes ended so far, of any sandbox. */
  private writes = 0

  async read(
    sandboxID: string,
    load: () => Promise<SandboxRow | undefined>,
  ): Promise<SandboxRow | undefined> {
    const kept = this.rows.get(sandboxID)
    if (kept !== undefined) return kept
    const writesBefore = this.writes
    const row = await load()
    if (row !== undefined && this.writes === writesBefore) this.rows.set(sandboxID, row)
    return row
  }

  /** After a write to `sandboxID`'s row (insert, update, delete) has ended, failed or not. */
  wrote(sandboxID: string): void {
    this.writes++
    this.rows.delete(sandboxID)
  }
}
