import { statSync } from 'node:fs'
import { Code, ConnectError } from '@connectrpc/connect'
import type { ActingUser } from '../acting-user.js'
import type { EnvdContext } from '../context.js'
import type { StartRequest } from '../gen/process/process_pb.js'
import type { ManagedProcess, ProcessLaunch } from './managed-process.js'
import { PIPE_CHUNK_BYTES, startPipeProcess } from './pipe-process.js'
import { processEnv } from './process-env.js'
import { ProcessOutput } from './process-output.js'
import { PTY_CHUNK_BYTES, startPtyProcess } from './pty-process.js'
import { spawnCommand } from './spawn-command.js'

/** The output hub for a `StartRequest`, sized for pipes or a PTY (wire contract §3.5). */
export function outputFor(request: StartRequest): ProcessOutput {
  return new ProcessOutput(request.pty ? PTY_CHUNK_BYTES : PIPE_CHUNK_BYTES)
}

/**
 * Starts what a `StartRequest` asks for, as the request's user: cwd resolved like a filesystem
 * path, the contract's env precedence, credentials through run-as, pipes or a PTY.
 */
export async function launchProcess(
  ctx: EnvdContext,
  request: StartRequest,
  requestUser: ActingUser,
  options: { output: ProcessOutput },
): Promise<ManagedProcess> {
  const { user, resolvePath } = requestUser
  const config = request.process
  const cwd = resolvePath(config?.cwd ?? '')
  assertDirectoryExists(cwd)
  const launch: ProcessLaunch = {
    command: spawnCommand({
      runAs: ctx.runAs,
      credentials: user,
      cmd: config?.cmd ?? '',
      args: config?.args ?? [],
    }),
    cwd,
    env: processEnv({
      envdPath: process.env.PATH,
      user,
      defaults: ctx.state.defaultEnv(),
      request: config?.envs ?? {},
    }),
    tag: request.tag,
    config: {
      cmd: config?.cmd ?? '',
      args: [...(config?.args ?? [])],
      envs: { ...config?.envs },
      cwd: config?.cwd,
    },
    output: options.output,
    logger: ctx.logger,
  }
  try {
    if (request.pty) return await startPtyProcess(launch, request.pty.size ?? { cols: 0, rows: 0 })
    // Wire contract §3.5: an absent `stdin` opens a pipe, as older clients expect.
    return await startPipeProcess(launch, request.stdin ?? true)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new ConnectError(
      `error starting process '${launch.config.cmd}': ${reason}`,
      Code.Internal,
    )
  }
}

/**
 * Wire contract §3.5: a cwd that does not exist is `invalid_argument`. Synchronous, like every
 * path-based call of envd (see `asUser` in fs/as-user.ts).
 */
function assertDirectoryExists(cwd: string): void {
  let missing: boolean
  try {
    missing = statSync(cwd, { throwIfNoEntry: false }) === undefined
  } catch {
    // Not ours to judge (a search permission, say): the process start reports it.
    missing = false
  }
  if (missing) throw new ConnectError(`cwd '${cwd}' does not exist`, Code.InvalidArgument)
}
