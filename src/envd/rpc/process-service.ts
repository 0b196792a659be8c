import { Code, ConnectError, type HandlerContext, type ServiceImpl } from '@connectrpc/connect'
import type { EnvdContext } from '../context.js'
import {
  type Process,
  type ProcessInput,
  Signal,
  type StartRequest,
  type StreamInputRequest,
} from '../gen/process/process_pb.js'
import { keepaliveIntervalMs, processEvents } from '../process/event-stream.js'
import type { ManagedProcess, ProcessSignal } from '../process/managed-process.js'
import { OutputQueue } from '../process/output-queue.js'
import { launchProcess, outputFor } from '../process/process-launcher.js'
import { EXITED_RETENTION_MS, ProcessRegistry } from '../process/process-registry.js'
import { selectProcess } from '../process/process-selector.js'
import { requestUser } from './request-user.js'

export interface ProcessServiceOptions {
  /** How long an exited process stays connectable (wire contract §3.5: 30 s). */
  retentionMs?: number
}

/**
 * envd's `process.Process` service (wire contract §3.5). Its registry of started processes
 * lives as long as envd does.
 */
export function createProcessService(
  ctx: EnvdContext,
  options: ProcessServiceOptions = {},
): ServiceImpl<typeof Process> {
  const registry = new ProcessRegistry(options.retentionMs ?? EXITED_RETENTION_MS)
  const starter: Starter = { ctx, registry }
  return {
    list: () => ({
      processes: registry.running().map((p) => ({ pid: p.pid, tag: p.tag, config: p.config })),
    }),
    start: (request, context) => start(starter, request, context),
    connect: (request, context) => {
      const process = selectProcess(registry, request.process, { includeEnded: true })
      return processEvents(process, new OutputQueue(process.output), streamOptions(context))
    },
    update: (request) => {
      const process = selectProcess(registry, request.process)
      const size = request.pty?.size
      if (size !== undefined) asInternal(() => process.resize(size.cols, size.rows))
      return {}
    },
    sendInput: async (request) => {
      await writeInput(selectProcess(registry, request.process), request.input)
      return {}
    },
    streamInput: (requests) => streamInput(registry, requests),
    sendSignal: (request) => {
      const process = selectProcess(registry, request.process)
      process.signal(processSignal(request.signal))
      return {}
    },
    closeStdin: (request) => {
      const process = selectProcess(registry, request.process)
      asInternal(() => process.closeStdin())
      return {}
    },
  }
}

interface Starter {
  ctx: EnvdContext
  registry: ProcessRegistry
}

/** `Start`: spawns the process, registers it and streams its events (wire contract §3.5). */
async function* start(starter: Starter, request: StartRequest, context: HandlerContext) {
  const { ctx, registry } = starter
  const user = await requestUser(ctx, context.requestHeader)
  const output = outputFor(request)
  // Subscribed before the spawn: the stream sees every byte the process writes.
  const queue = new OutputQueue(output)
  let process: ManagedProcess
  try {
    process = await launchProcess(ctx, request, user, { output })
  } catch (error) {
    queue.close()
    throw error
  }
  registry.add(process)
  limitLifetime(process, context.timeoutMs())
  const logger = ctx.logger.child({ pid: process.pid })
  logger.info(
    { cmd: process.config.cmd, args: process.config.args, tag: process.tag, user: user.user.name },
    'process started',
  )
  process.output.subscribe((event) => {
    if (event.case === 'end') logger.info({ status: event.status.status }, 'process ended')
  })
  yield* processEvents(process, queue, streamOptions(context))
}

function streamOptions(context: HandlerContext): { keepaliveMs: number; signal: AbortSignal } {
  return { keepaliveMs: keepaliveIntervalMs(context.requestHeader), signal: context.signal }
}

/**
 * Wire contract §3.5: the Connect deadline of `Start` is the process's lifetime; it is killed
 * when the deadline passes. No deadline means no limit.
 */
function limitLifetime(process: ManagedProcess, timeoutMs: number | undefined): void {
  if (timeoutMs === undefined || timeoutMs <= 0 || process.output.end !== undefined) return
  const timer = setTimeout(() => process.signal('SIGKILL'), timeoutMs)
  process.output.subscribe((event) => {
    if (event.case === 'end') clearTimeout(timer)
  })
}

/** `SendSignal` accepts SIGTERM and SIGKILL only; anything else is `unimplemented`. */
function processSignal(signal: Signal): ProcessSignal {
  if (signal === Signal.SIGTERM) return 'SIGTERM'
  if (signal === Signal.SIGKILL) return 'SIGKILL'
  throw new ConnectError(`invalid signal: ${Signal[signal] ?? signal}`, Code.Unimplemented)
}

/**
 * Stdin bytes to a pipe process, PTY bytes to a PTY process. A mismatch, or stdin that is
 * disabled or closed, is `internal` (wire contract §3.5), as in E2B's envd, where every input
 * failure takes that one path.
 */
async function writeInput(process: ManagedProcess, input: ProcessInput | undefined): Promise<void> {
  const choice = input?.input
  if (choice === undefined || choice.case === undefined) {
    throw new ConnectError('process input is required', Code.InvalidArgument)
  }
  try {
    if (choice.case === 'stdin') await process.writeStdin(choice.value)
    else await process.writePty(choice.value)
  } catch (error) {
    throw internalError(error)
  }
}

/** `StreamInput`: a `start` naming the process, then any number of `data` and `keepalive`. */
async function streamInput(
  registry: ProcessRegistry,
  requests: AsyncIterable<StreamInputRequest>,
): Promise<Record<string, never>> {
  let process: ManagedProcess | undefined
  for await (const request of requests) {
    const event = request.event
    if (event.case === 'start') {
      process = selectProcess(registry, event.value.process)
    } else if (event.case === 'data') {
      if (process === undefined) {
        throw new ConnectError('the first StreamInput message must be start', Code.InvalidArgument)
      }
      await writeInput(process, event.value.input)
    }
  }
  return {}
}

function asInternal(action: () => void): void {
  try {
    action()
  } catch (error) {
    throw internalError(error)
  }
}

function internalError(error: unknown): ConnectError {
  if (error instanceof ConnectError) return error
  return new ConnectError(error instanceof Error ? error.message : String(error), Code.Internal)
}
