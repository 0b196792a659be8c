import { opendirSync, statSync } from 'node:fs'
import path from 'node:path'
import { create } from '@bufbuild/protobuf'
import { Code, ConnectError } from '@connectrpc/connect'
import {
  EventType,
  type FilesystemEvent,
  FilesystemEventSchema,
} from '../gen/filesystem/filesystem_pb.js'
import type { OsUser, UserDirectory } from '../users.js'
import { deniedAs } from './access-check.js'
import { asUser } from './as-user.js'
import { DirWatcher } from './dir-watcher.js'
import { entryInfo } from './entry-info.js'
import { isOnNetworkMount } from './network-mounts.js'
import type { ClassifiedEvent } from './watch-event-classifier.js'

/** The fields WatchDirRequest and CreateWatcherRequest share (wire contract §3.4). */
export interface WatchOptions {
  /** Absolute, already resolved for the request user. */
  dir: string
  recursive: boolean
  includeEntry: boolean
  allowNetworkMounts: boolean
  user: OsUser
  users: UserDirectory
}

/** Wire contract §3.4: only these event types carry the entry when `include_entry` is set. */
const typesWithEntry = new Set([EventType.CREATE, EventType.WRITE, EventType.CHMOD])

/**
 * One watch of a directory with its events buffered until taken: the WatchDir stream takes them
 * as they come, a polling watcher when GetWatcherEvents asks. A watcher failure is kept and
 * thrown by the next `take()` once the events before it are drained.
 */
export class WatchSession {
  private events: FilesystemEvent[] = []
  private failure: unknown
  private wake: (() => void) | undefined
  private watcher: DirWatcher | undefined

  private constructor(private readonly options: WatchOptions) {}

  /**
   * Checks the directory as wire contract §3.4 says (exists → `not_found`, a directory →
   * `invalid_argument`, not a network mount unless allowed), with the request user's
   * credentials, and starts watching it.
   */
  static async open(options: WatchOptions): Promise<WatchSession> {
    asUser(options.user, () => {
      if (!statSync(options.dir).isDirectory()) {
        throw new ConnectError(`path is not a directory: ${options.dir}`, Code.InvalidArgument)
      }
      try {
        opendirSync(options.dir).closeSync()
      } catch (error) {
        throw deniedAs(error, options.dir, 'read')
      }
    })
    if (!options.allowNetworkMounts && isOnNetworkMount(options.dir)) {
      throw new ConnectError(
        `cannot watch path on network filesystem: ${options.dir}`,
        Code.InvalidArgument,
      )
    }
    const session = new WatchSession(options)
    session.watcher = await DirWatcher.start({
      root: options.dir,
      recursive: options.recursive,
      onEvents: (events) => session.push(events),
      onError: (error) => {
        session.failure = error
        session.wake?.()
      },
    })
    return session
  }

  /** The buffered events, oldest first, leaving the buffer empty. */
  take(): FilesystemEvent[] {
    const events = this.events
    this.events = []
    if (events.length === 0 && this.failure !== undefined) throw this.failure
    return events
  }

  /** Resolves when events (or a failure) are waiting, after `timeoutMs`, or on `signal`. */
  async waitForEvents(timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (this.events.length > 0 || this.failure !== undefined || signal.aborted) return
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        signal.removeEventListener('abort', done)
        this.wake = undefined
        resolve()
      }
      const timer = setTimeout(done, timeoutMs)
      signal.addEventListener('abort', done)
      this.wake = done
    })
  }

  /** Stops watching and releases every `fs.watch` handle. */
  close(): void {
    this.watcher?.close()
    this.wake?.()
  }

  private async push(classified: ClassifiedEvent[]): Promise<void> {
    const names = this.options.includeEntry ? await this.options.users.names() : undefined
    for (const { path: eventPath, type } of classified) {
      const entry =
        names && typesWithEntry.has(type) ? this.entryOrUndefined(eventPath, names) : undefined
      const name = path.relative(this.options.dir, eventPath)
      this.events.push(create(FilesystemEventSchema, { name, type, entry }))
    }
    this.wake?.()
  }

  /** The entry as the watching user may see it; undefined when gone or not theirs to see. */
  private entryOrUndefined(
    eventPath: string,
    names: Awaited<ReturnType<UserDirectory['names']>>,
  ): FilesystemEvent['entry'] {
    try {
      return asUser(this.options.user, () => entryInfo(eventPath, names))
    } catch {
      return undefined
    }
  }
}
