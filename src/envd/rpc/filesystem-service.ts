import { lstat, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from '@connectrpc/connect'
import type { EnvdContext } from '../context.js'
import { assertMayAccess, assertMayCreate } from '../fs/access-check.js'
import { entryInfo } from '../fs/entry-info.js'
import { errnoCode } from '../fs/errno-code.js'
import { listDir } from '../fs/list-dir.js'
import { makeOwnedDirs } from '../fs/make-dirs.js'
import { WatchSession } from '../fs/watch-session.js'
import { keepaliveIntervalMs, watchDirStream } from '../fs/watch-stream.js'
import { WatcherRegistry } from '../fs/watcher-registry.js'
import type { Filesystem, WatchDirRequest } from '../gen/filesystem/filesystem_pb.js'
import { connectErrorFromFsError } from './fs-errors.js'
import { requestUser } from './request-user.js'

type FilesystemImpl = ServiceImpl<typeof Filesystem>

/** Maps an OS failure on `subject` to its Connect error, logging what the client is not told. */
type Fail = (error: unknown, subject: string) => ConnectError

/**
 * envd's `filesystem.Filesystem` service (wire contract §3.4). envd runs as root and acts for
 * the request user: it checks that user's permissions itself and chowns what it creates.
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
      const { resolvePath } = await requestUser(ctx, context.requestHeader)
      const target = resolvePath(request.path)
      try {
        return { entry: await entryInfo(target, await ctx.users.names()) }
      } catch (error) {
        throw fail(error, target)
      }
    },

    async listDir(request, context) {
      const { user, resolvePath } = await requestUser(ctx, context.requestHeader)
      const dir = resolvePath(request.path)
      try {
        return { entries: await listDir(dir, request.depth, user, await ctx.users.names()) }
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
  const absentIfMissing = (target: string) => (error: unknown) => {
    if (errnoCode(error) === 'ENOENT') return undefined
    throw fail(error, target)
  }
  return {
    async makeDir(request, context) {
      const { user, resolvePath } = await requestUser(ctx, context.requestHeader)
      const dir = resolvePath(request.path)
      const existing = await stat(dir).catch(absentIfMissing(dir))
      if (existing?.isDirectory()) {
        throw new ConnectError(`directory already exists: ${dir}`, Code.AlreadyExists)
      }
      if (existing) {
        const message = `path already exists but it is not a directory: ${dir}`
        throw new ConnectError(message, Code.InvalidArgument)
      }
      try {
        await assertMayCreate(dir, user)
        await makeOwnedDirs(dir, user)
        return { entry: await entryInfo(dir, await ctx.users.names()) }
      } catch (error) {
        throw fail(error, dir)
      }
    },

    async move(request, context) {
      const { user, resolvePath } = await requestUser(ctx, context.requestHeader)
      const source = resolvePath(request.source)
      const destination = resolvePath(request.destination)
      try {
        await lstat(source)
        await assertMayAccess(path.dirname(source), user, 'write')
      } catch (error) {
        throw fail(error, source)
      }
      try {
        await assertMayCreate(destination, user)
        await makeOwnedDirs(path.dirname(destination), user)
        await rename(source, destination)
        return { entry: await entryInfo(destination, await ctx.users.names()) }
      } catch (error) {
        throw fail(error, destination)
      }
    },

    async remove(request, context) {
      const { user, resolvePath } = await requestUser(ctx, context.requestHeader)
      const target = resolvePath(request.path)
      // Wire contract §3.4: removing a missing path succeeds.
      if (!(await lstat(target).catch(absentIfMissing(target)))) return {}
      try {
        await assertMayAccess(path.dirname(target), user, 'write')
        await rm(target, { recursive: true, force: true })
        return {}
      } catch (error) {
        throw fail(error, target)
      }
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
