import { lstatSync, renameSync, rmSync, type Stats, statSync } from 'node:fs'
import path from 'node:path'
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from '@connectrpc/connect'
import { errnoCode } from '../../errno-code.js'
import type { EnvdContext } from '../context.js'
import { asUser } from '../fs/as-user.js'
import { entryInfo, type OwnerNames } from '../fs/entry-info.js'
import { listDir } from '../fs/list-dir.js'
import { makeDirs } from '../fs/make-dirs.js'
import { holdDirectory, mayCreateAsRoot } from '../fs/root-create.js'
import { WatchSession } from '../fs/watch-session.js'
import { keepaliveIntervalMs, watchDirStream } from '../fs/watch-stream.js'
import { WatcherRegistry } from '../fs/watcher-registry.js'
import type { EntryInfo, Filesystem, WatchDirRequest } from '../gen/filesystem/filesystem_pb.js'
import type { OsUser } from '../users.js'
import { connectErrorFromFsError } from './fs-errors.js'
import { requestUser } from './request-user.js'

type FilesystemImpl = ServiceImpl<typeof Filesystem>

/** Maps an OS failure on `subject` to its Connect error, logging what the client is not told. */
type Fail = (error: unknown, subject: string) => ConnectError

/**
 * envd's `filesystem.Filesystem` service (wire contract §3.4). envd runs as root and acts for
 * the request user: every filesystem call runs with that user's credentials (`asUser`), so
 * the kernel checks it and what it creates belongs to the user. Only directories the kernel
 * denies the user creating are made by root for the user, as E2B's envd does (`root-create.ts`).
 */
export function createFilesystemService(ctx: EnvdContext): FilesystemImpl {
  const fail: Fail = (error, subject) => {
    const connectError = connectErrorFromFsError(error, subject)
    if (connectError.code === Code.Internal) {
      ctx.logger.error({ err: error, path: subject }, 'filesystem operation failed')
    }
    return connectError
  }
  return {
    ...inspectionHandlers(ctx, fail),
    ...changeHandlers(ctx, fail),
    ...watchHandlers(ctx, fail),
  }
}

function inspectionHandlers(
  ctx: EnvdContext,
  fail: Fail,
): Pick<FilesystemImpl, 'stat' | 'listDir'> {
  return {
    async stat(request, context) {
      const { user, resolvePath } = await requestUser(ctx, context.requestHeader)
      const target = resolvePath(request.path)
      const names = await ctx.users.names()
      try {
        return { entry: asUser(user, () => entryInfo(target, names)) }
      } catch (error) {
        throw fail(error, target)
      }
    },

    async listDir(request, context) {
      const { user, resolvePath } = await requestUser(ctx, context.requestHeader)
      const dir = resolvePath(request.path)
      const names = await ctx.users.names()
      try {
        return { entries: asUser(user, () => listDir(dir, request.depth, names)) }
      } catch (error) {
        throw fail(error, dir)
      }
    },
  }
}

function changeHandlers(
  ctx: EnvdContext,
  fail: Fail,
): Pick<FilesystemImpl, 'makeDir' | 'move' | 'remove'> {
  return {
    async makeDir(request, context) {
      const { user, resolvePath } = await requestUser(ctx, context.requestHeader)
      const dir = resolvePath(request.path)
      const names = await ctx.users.names()
      try {
        return { entry: asUser(user, () => makeDir(dir, names)) }
      } catch (error) {
        if (!mayCreateAsRoot(user, error)) throw fail(error, dir)
        // Denied to the user, created by root as E2B's envd does, never through a symlink.
        let entry: EntryInfo | undefined
        try {
          entry = makeDirAsRoot(dir, user, names)
        } catch (rootError) {
          throw fail(rootError, dir)
        }
        if (entry === undefined) throw fail(error, dir)
        return { entry }
      }
    },

    async move(request, context) {
      const { user, resolvePath } = await requestUser(ctx, context.requestHeader)
      const source = resolvePath(request.source)
      const destination = resolvePath(request.destination)
      const names = await ctx.users.names()
      const entry = asUser(user, () => {
        try {
          lstatSync(source)
        } catch (error) {
          throw fail(error, source)
        }
        try {
          makeDirs(path.dirname(destination))
          renameSync(source, destination)
          return entryInfo(destination, names)
        } catch (error) {
          throw fail(error, destination)
        }
      })
      return { entry }
    },

    async remove(request, context) {
      const { user, resolvePath } = await requestUser(ctx, context.requestHeader)
      const target = resolvePath(request.path)
      asUser(user, () => {
        // Wire contract §3.4: removing a missing path succeeds.
        if (!existingOrUndefined(() => lstatSync(target), fail, target)) return
        try {
          rmSync(target, { recursive: true, force: true })
        } catch (error) {
          throw fail(error, target)
        }
      })
      return {}
    },
  }
}

function watchHandlers(
  ctx: EnvdContext,
  fail: Fail,
): Pick<FilesystemImpl, 'watchDir' | 'createWatcher' | 'getWatcherEvents' | 'removeWatcher'> {
  const watchers = new WatcherRegistry()
  const openSession = async (
    request: Omit<WatchDirRequest, '$typeName'>,
    context: HandlerContext,
  ): Promise<WatchSession> => {
    const { user, resolvePath } = await requestUser(ctx, context.requestHeader)
    const dir = resolvePath(request.path)
    const { recursive, includeEntry, allowNetworkMounts } = request
    const options = { dir, recursive, includeEntry, allowNetworkMounts, user, users: ctx.users }
    return WatchSession.open(options).catch((error: unknown) => {
      throw fail(error, dir)
    })
  }
  return {
    async *watchDir(request, context) {
      const session = await openSession(request, context)
      const keepaliveMs = keepaliveIntervalMs(context.requestHeader.get('keepalive-ping-interval'))
      try {
        yield* watchDirStream(session, keepaliveMs, context.signal)
      } catch (error) {
        throw fail(error, request.path)
      }
    },

    async createWatcher(request, context) {
      return { watcherId: watchers.add(await openSession(request, context)) }
    },

    async getWatcherEvents(request) {
      const session = watchers.get(request.watcherId)
      try {
        return { events: session.take() }
      } catch (error) {
        throw fail(error, request.watcherId)
      }
    },

    async removeWatcher(request) {
      watchers.remove(request.watcherId)
      return {}
    },
  }
}

/** MakeDir with the caller's credentials: `dir` and its missing parents, which must be new. */
function makeDir(dir: string, names: OwnerNames): EntryInfo {
  let existing: Stats | undefined
  try {
    existing = statSync(dir)
  } catch (error) {
    // Left raw, so that a denial can still be retried as root.
    if (errnoCode(error) !== 'ENOENT') throw error
  }
  if (existing?.isDirectory()) {
    throw new ConnectError(`directory already exists: ${dir}`, Code.AlreadyExists)
  }
  if (existing) {
    const message = `path already exists but it is not a directory: ${dir}`
    throw new ConnectError(message, Code.InvalidArgument)
  }
  makeDirs(dir)
  return entryInfo(dir, names)
}

/**
 * MakeDir as root for `user`, creating `dir` and its missing parents (`holdDirectory`).
 * @returns undefined when root refuses as well: a symlink on the way, or `dir` exists
 * already (the user could not see it, so is not told).
 */
function makeDirAsRoot(dir: string, user: OsUser, names: OwnerNames): EntryInfo | undefined {
  const held = holdDirectory(dir, user)
  if (held === undefined) return undefined
  try {
    if (held.created.length === 0) return undefined
    // Described through envd's own descriptor of it, under the path the client asked for: its
    // parent may be a directory root just gave the user, who could swap the name meanwhile.
    return { ...entryInfo(held.entry('.'), names), name: path.basename(dir), path: dir }
  } finally {
    held.release()
  }
}

/** What `look` finds, or undefined when nothing is there; other failures become Connect errors. */
function existingOrUndefined<T>(look: () => T, fail: Fail, target: string): T | undefined {
  try {
    return look()
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined
    throw fail(error, target)
  }
}
