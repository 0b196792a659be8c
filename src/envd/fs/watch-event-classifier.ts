import path from 'node:path'
import { EventType } from '../gen/filesystem/filesystem_pb.js'
import { isUploadStagingPath } from './upload-staging.js'

/** What a watcher remembers about an entry, to tell a create, write, chmod or move apart. */
export interface EntrySnapshot {
  ino: number
  mode: number
  uid: number
  gid: number
  size: number
  mtimeMs: number
  isDirectory: boolean
}

/** libuv's two `fs.watch` event kinds: `rename` (entry added/removed/moved), `change` (data/attrs). */
export type RawChange = 'rename' | 'change'

/** One path touched during a batch: the raw kinds seen, and the entry before and after. */
export interface ObservedPath {
  path: string
  kinds: ReadonlySet<RawChange>
  before: EntrySnapshot | undefined
  after: EntrySnapshot | undefined
  /** Whether the directory reporting the path still exists (false: the event was its own end). */
  parentExists: boolean
}

export interface ClassifiedEvent {
  path: string
  type: EventType
}

/** Wire contract §3.4: one change's typed events go out in this order. */
const typeOrder = [
  EventType.CREATE,
  EventType.RENAME,
  EventType.CHMOD,
  EventType.WRITE,
  EventType.REMOVE,
]

/**
 * Turns one batch of `fs.watch` reports into E2B's event types. Node exposes only libuv's
 * `rename`/`change`, not inotify's masks, so the types are inferred by comparing each path's
 * entry before (the watcher's cache) and after (a fresh `lstat`):
 * - an inode that left one path and reached another in the same batch is a move: RENAME for the
 *   old path and CREATE for the new one, as inotify's MOVED_FROM/MOVED_TO pair reads in E2B;
 * - a new inode at a path is CREATE (plus WRITE when data changes were reported too); a known
 *   inode gone for good is REMOVE; one that came and went unseen is CREATE then REMOVE;
 * - a changed file is CHMOD when mode or owner moved, WRITE when size or mtime moved, and
 *   WRITE when libuv reported `change` without a visible difference (rewritten in place); a
 *   changed directory is CHMOD.
 * - upload temporaries (upload-staging.ts) are never reported; a new inode arriving from one (or
 *   beside one seen in the same batch) is the upload landing: WRITE, preceded by CREATE when
 *   the path was new, as E2B's in-place upload reads.
 * The approximation misses changes collapsed between two looks (e.g. a chmod reverted before
 * the batch ran) and splits a move into REMOVE + CREATE when its halves land in two batches.
 */
export function classifyBatch(observed: readonly ObservedPath[]): ClassifiedEvent[] {
  const appearedInodes = new Set<number>()
  for (const { before, after } of observed) {
    if (after && (!before || before.ino !== after.ino)) appearedInodes.add(after.ino)
  }
  const staging = observed.filter((item) => isUploadStagingPath(item.path))
  const upload = {
    dirs: new Set(staging.map((item) => path.dirname(item.path))),
    inodes: new Set(staging.flatMap((item) => (item.before ? [item.before.ino] : []))),
  }
  const events: ClassifiedEvent[] = []
  for (const item of observed) {
    if (isUploadStagingPath(item.path)) continue
    const types = isUploadLanding(item, upload)
      ? new Set(item.before ? [EventType.WRITE] : [EventType.CREATE, EventType.WRITE])
      : classifyPath(item, appearedInodes)
    for (const type of typeOrder) if (types.has(type)) events.push({ path: item.path, type })
  }
  return events
}

function isUploadLanding(
  { path: entryPath, before, after }: ObservedPath,
  upload: { dirs: ReadonlySet<string>; inodes: ReadonlySet<number> },
): boolean {
  if (!after || after.isDirectory || (before && before.ino === after.ino)) return false
  return upload.inodes.has(after.ino) || upload.dirs.has(path.dirname(entryPath))
}

function classifyPath(item: ObservedPath, appearedInodes: ReadonlySet<number>): Set<EventType> {
  const { before, after, kinds } = item
  const types = new Set<EventType>()
  if (before && after && before.ino === after.ino) return changedTypes(before, after, kinds)
  if (after) {
    types.add(EventType.CREATE)
    if (kinds.has('change')) types.add(EventType.WRITE)
  }
  if (before) {
    if (appearedInodes.has(before.ino)) types.add(EventType.RENAME)
    else if (!after) types.add(EventType.REMOVE)
  }
  if (!before && !after && kinds.has('rename') && item.parentExists) {
    types.add(EventType.CREATE)
    types.add(EventType.REMOVE)
  }
  return types
}

function changedTypes(
  before: EntrySnapshot,
  after: EntrySnapshot,
  kinds: ReadonlySet<RawChange>,
): Set<EventType> {
  const types = new Set<EventType>()
  const attributesMoved =
    before.mode !== after.mode || before.uid !== after.uid || before.gid !== after.gid
  // A directory's size and mtime follow its children, which its own watcher reports; inotify
  // tells only attribute changes (ATTRIB) about the directory itself.
  if (after.isDirectory) {
    if (attributesMoved || kinds.has('change')) types.add(EventType.CHMOD)
    return types
  }
  if (attributesMoved) types.add(EventType.CHMOD)
  if (before.size !== after.size || before.mtimeMs !== after.mtimeMs) types.add(EventType.WRITE)
  if (types.size === 0 && kinds.has('change')) types.add(EventType.WRITE)
  return types
}
