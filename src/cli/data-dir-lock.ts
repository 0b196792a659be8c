import path from 'node:path'
import BetterSqlite3 from 'better-sqlite3'

/** Another serve holds the data directory: reported as a one-line refusal, not a stack trace. */
export class DataDirInUseError extends Error {}

/** The file whose lock marks a data directory as in use by one `sandbar serve`. */
const LOCK_FILE = 'serve.lock'

/** The locks' connections, kept from the collector: closing one would let its lock go. */
const held = new Set<BetterSqlite3.Database>()

/**
 * Holds `<dataDir>/serve.lock` for the life of this process, or throws when another process
 * holds it. A second serve on the same directory would reconcile the first one's sandboxes
 * mid-boot as abandoned and remove them. SQLite's exclusive lock is an fcntl lock, which the
 * kernel drops when its process ends, however it ends: a crashed serve leaves nothing behind.
 */
export function lockDataDir(dataDir: string): void {
  const lock = new BetterSqlite3(path.join(dataDir, LOCK_FILE), { timeout: 0 })
  try {
    lock.pragma('locking_mode = EXCLUSIVE')
    // Never committed, so never let go until the process ends.
    lock.exec('BEGIN EXCLUSIVE')
    held.add(lock)
  } catch (error) {
    lock.close()
    if (error instanceof BetterSqlite3.SqliteError && error.code === 'SQLITE_BUSY') {
      throw new DataDirInUseError(
        `another sandbar serve is using ${dataDir}: stop it first, or give this one its own --data-dir`,
      )
    }
    throw error
  }
}
