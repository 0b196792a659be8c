import { randomUUID } from 'node:crypto'
import { Code, ConnectError } from '@connectrpc/connect'
import type { WatchSession } from './watch-session.js'

/**
 * The polling watchers of CreateWatcher / GetWatcherEvents / RemoveWatcher (wire contract
 * §3.4), by random ID. A watcher lives until RemoveWatcher; envd keeps its events meanwhile.
 */
export class WatcherRegistry {
  private readonly sessions = new Map<string, WatchSession>()

  /** Registers a session and returns its new ID. */
  add(session: WatchSession): string {
    const id = randomUUID()
    this.sessions.set(id, session)
    return id
  }

  /** @throws ConnectError `not_found` for an unknown ID. */
  get(id: string): WatchSession {
    const session = this.sessions.get(id)
    if (!session) throw new ConnectError(`watcher with id ${id} not found`, Code.NotFound)
    return session
  }

  /** Closes and forgets a watcher. @throws ConnectError `not_found` for an unknown ID. */
  remove(id: string): void {
    this.get(id).close()
    this.sessions.delete(id)
  }
}
