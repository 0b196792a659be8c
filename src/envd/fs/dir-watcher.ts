import { type FSWatcher, lstatSync, readdirSync, type Stats, statSync, watch } from 'node:fs'
import path from 'node:path'
import { errnoCode } from '../../errno-code.js'
import { EventType } from '../gen/filesystem/filesystem_pb.js'
import { isUploadStagingPath } from './upload-staging.js'
import {
  type ClassifiedEvent,
  classifyBatch,
  type EntrySnapshot,
  type ObservedPath,
  type RawChange,
} from './watch-event-classifier.js'

export interface DirWatcherOptions {
  /** Absolute path of the watched directory; event paths are under it. */
  root: string
  recursive: boolean
  /** Receives each batch's events in order; the next batch waits for the returned promise. */
  onEvents(events: ClassifiedEvent[]): Promise<void>
  /** A failure that ends the watch; no events follow it. */
  onError(error: unknown): void
}

const vanishedCodes = new Set(['ENOENT', 'ENOTDIR'])

interface RawReport {
  dir: string
  /** Undefined when libuv could not name the entry (queue overflow): the directory is rescanned. */
  name: string | undefined
  kind: RawChange
}

/**
 * Watches a directory with one non-recursive `fs.watch` per directory (Node has no inotify
 * binding here, and recursive `fs.watch` cannot say which directory an event came from before
 * Node 22), adding watchers for directories created later when `recursive`. Reports that arrive
 * in one event-loop turn are classified together (watch-event-classifier.ts), which is what
 * pairs the two halves of a move.
 */
export class DirWatcher {
  private readonly watchers = new Map<string, FSWatcher>()
  private readonly cache = new Map<string, EntrySnapshot>()
  private pending: RawReport[] = []
  private queue: Promise<void> = Promise.resolve()
  private closed = false

  private constructor(private readonly options: DirWatcherOptions) {}

  /** Starts watching; resolves once every watcher is in place and the tree is remembered. */
  static async start(options: DirWatcherOptions): Promise<DirWatcher> {
    const watcher = new DirWatcher(options)
    try {
      await watcher.addTree(options.root, undefined)
    } catch (error) {
      watcher.close()
      throw error
    }
    return watcher
  }

  /** Releases every `fs.watch` handle; pending reports are dropped. */
  close(): void {
    this.closed = true
    for (const handle of this.watchers.values()) handle.close()
    this.watchers.clear()
    this.pending = []
  }

  private watchDirectory(dir: string, isRoot: boolean): void {
    if (this.watchers.has(dir)) return
    const handle = watch(dir, { persistent: false }, (kind, name) => {
      this.report({ dir, name: name ?? undefined, kind: kind === 'change' ? 'change' : 'rename' })
    })
    handle.on('error', (error) => {
      this.unwatch(dir)
      if (isRoot) this.fail(error)
    })
    this.watchers.set(dir, handle)
  }

  private report(raw: RawReport): void {
    if (this.closed) return
    this.pending.push(raw)
    if (this.pending.length > 1) return
    setImmediate(() => {
      const batch = this.pending
      this.pending = []
      if (batch.length === 0) return
      this.queue = this.queue.then(() => this.process(batch)).catch((error) => this.fail(error))
    })
  }

  private fail(error: unknown): void {
    if (this.closed) return
    this.close()
    this.options.onError(error)
  }

  private async process(batch: RawReport[]): Promise<void> {
    if (this.closed) return
    const observed = await this.observe(batch)
    for (const item of observed) this.remember(item)
    const discovered: ClassifiedEvent[] = []
    if (this.options.recursive) {
      for (const item of observed) await this.followDirectories(item, discovered)
    }
    const events = [...classifyBatch(observed), ...discovered]
    if (events.length > 0 && !this.closed) await this.options.onEvents(events)
  }

  /** Groups a batch by path (first report first) and looks at each path's entry now. */
  private async observe(batch: RawReport[]): Promise<ObservedPath[]> {
    const byPath = new Map<string, { dir: string; kinds: Set<RawChange> }>()
    for (const { dir, name, kind } of batch) {
      const names = name === undefined ? await this.namesIn(dir) : [name]
      for (const entryName of names) {
        const entryPath = path.join(dir, entryName)
        const seen = byPath.get(entryPath) ?? { dir, kinds: new Set<RawChange>() }
        seen.kinds.add(kind)
        byPath.set(entryPath, seen)
      }
    }
    const observed: ObservedPath[] = []
    for (const [entryPath, { dir, kinds }] of byPath) {
      observed.push({
        path: entryPath,
        kinds,
        before: this.cache.get(entryPath),
        after: snapshot(entryPath),
        parentExists: isDirectory(dir),
      })
    }
    return observed
  }

  /** Every name the cache knows in `dir` plus every name in it now. */
  private async namesIn(dir: string): Promise<string[]> {
    const known = [...this.cache.keys()].filter((p) => path.dirname(p) === dir)
    const present = namesOrEmpty(dir)
    return [...new Set([...known.map((p) => path.basename(p)), ...present])]
  }

  private remember({ path: entryPath, before, after }: ObservedPath): void {
    if (before && (!after || after.ino !== before.ino)) this.forgetTree(entryPath)
    if (after) this.cache.set(entryPath, after)
  }

  /** Drops a vanished or replaced entry and, for a directory, everything remembered below it. */
  private forgetTree(entryPath: string): void {
    this.cache.delete(entryPath)
    const prefix = `${entryPath}/`
    for (const key of [...this.cache.keys()]) if (key.startsWith(prefix)) this.cache.delete(key)
    for (const dir of [...this.watchers.keys()]) {
      if (dir === entryPath || dir.startsWith(prefix)) this.unwatch(dir)
    }
  }

  private async followDirectories(item: ObservedPath, out: ClassifiedEvent[]): Promise<void> {
    const { after } = item
    if (!after?.isDirectory || this.watchers.has(item.path)) return
    await this.addTree(item.path, out)
  }

  /**
   * Watches `dir` (before reading it, so nothing created meanwhile is missed) and remembers its
   * entries, descending when recursive. With `created`, every entry found is reported there as
   * CREATE: a directory that appears during the watch (`mkdir -p`, a moved-in tree) shows its
   * contents the way a client walking it would expect.
   */
  private async addTree(dir: string, created: ClassifiedEvent[] | undefined): Promise<void> {
    const isRoot = dir === this.options.root
    try {
      this.watchDirectory(dir, isRoot)
    } catch (error) {
      // A subdirectory may be gone or replaced by the time its watcher is added.
      if (isRoot || !vanishedCodes.has(errnoCode(error) ?? '')) throw error
      return
    }
    const names = isRoot ? readdirSync(dir) : namesOrEmpty(dir)
    for (const name of names) {
      const entryPath = path.join(dir, name)
      const entry = snapshot(entryPath)
      if (!entry || this.closed) continue
      this.cache.set(entryPath, entry)
      if (!isUploadStagingPath(entryPath)) {
        created?.push({ path: entryPath, type: EventType.CREATE })
      }
      if (entry.isDirectory && this.options.recursive) await this.addTree(entryPath, created)
    }
  }

  private unwatch(dir: string): void {
    this.watchers.get(dir)?.close()
    this.watchers.delete(dir)
  }
}

/*
 * The watcher's own filesystem calls are synchronous, like every path-based call of envd: a
 * request may switch envd's credentials to a user's at any moment between them (`asUser`).
 */

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory()
  } catch {
    return false
  }
}

function namesOrEmpty(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

function snapshot(entryPath: string): EntrySnapshot | undefined {
  let info: Stats
  try {
    info = lstatSync(entryPath)
  } catch {
    return undefined
  }
  return {
    ino: info.ino,
    mode: info.mode,
    uid: info.uid,
    gid: info.gid,
    size: info.size,
    mtimeMs: info.mtimeMs,
    isDirectory: info.isDirectory(),
  }
}
