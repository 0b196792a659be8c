import { createClient } from '@connectrpc/connect'
import { createConnectTransport } from '@connectrpc/connect-node'
import { Process, Signal } from '../gen/process/process_pb.js'

/** How to reach one sandbox's envd from the host. */
export interface EnvdTarget {
  /** `http://<sandbox address>:49983`. */
  url: string
  /** The sandbox's envd access token, when it has one. */
  accessToken?: string | undefined
}

/** One command for envd's `process.Process/Start` (wire contract §3.5). */
export interface EnvdCommand {
  cmd: string
  args: string[]
  /** The user it runs as; envd's default user when unset. */
  user?: string
  cwd?: string | undefined
  envs?: Record<string, string>
}

/** A command started in the background (`EnvdProcessClient.start`). */
export interface StartedCommand {
  pid: number
  ended: Promise<EnvdCommandResult | undefined>
  detach(): void
}

/** What a finished command reported. */
export interface EnvdCommandResult {
  exitCode: number
  /** envd's description of an abnormal end (a signal, a spawn failure). */
  error?: string | undefined
}

/**
 * A host-side client of envd's process service, for the roles that run commands in sandboxes
 * themselves: the agent (start and ready commands) and the builder (template steps). Users'
 * clients use the SDK instead.
 */
export class EnvdProcessClient {
  private readonly client

  constructor(private readonly target: EnvdTarget) {
    this.client = createClient(
      Process,
      createConnectTransport({ baseUrl: target.url, httpVersion: '1.1' }),
    )
  }

  /**
   * Runs the command to its end; each complete output line goes to `onLine`. Aborting `signal`
   * kills it (the stream closes, and the process with it via SIGKILL).
   */
  async run(
    command: EnvdCommand,
    options: {
      onLine?: (line: string, stream: 'stdout' | 'stderr') => void
      signal?: AbortSignal
    } = {},
  ): Promise<EnvdCommandResult> {
    const streams = { stdout: new LineSplitter(), stderr: new LineSplitter() }
    let pid: number | undefined
    const kill = () => {
      if (pid !== undefined) void this.kill(command.user, pid).catch(() => undefined)
    }
    options.signal?.addEventListener('abort', kill, { once: true })
    try {
      for await (const response of this.client.start(this.request(command), {
        headers: this.headers(command.user),
        signal: options.signal,
      })) {
        const event = response.event?.event
        if (event?.case === 'start') pid = event.value.pid
        else if (event?.case === 'data') {
          const output = event.value.output
          if (output.case === 'stdout' || output.case === 'stderr') {
            for (const line of streams[output.case].push(output.value)) {
              options.onLine?.(line, output.case)
            }
          }
        } else if (event?.case === 'end') {
          for (const name of ['stdout', 'stderr'] as const) {
            for (const line of streams[name].flush()) options.onLine?.(line, name)
          }
          return { exitCode: event.value.exitCode, error: event.value.error }
        }
      }
    } finally {
      options.signal?.removeEventListener('abort', kill)
    }
    throw new Error(`envd ended the stream of '${command.cmd}' without its exit`)
  }

  /**
   * Starts the command and returns once envd reports its PID. `ended` settles with its exit
   * while it is watched; `detach` stops watching and leaves it running in the sandbox (§3.5:
   * processes outlive their streams), after which `ended` resolves undefined.
   */
  async start(command: EnvdCommand): Promise<StartedCommand> {
    const detach = new AbortController()
    const events = this.client
      .start(this.request(command), {
        headers: this.headers(command.user),
        signal: detach.signal,
      })
      [Symbol.asyncIterator]()
    for (;;) {
      const next = await events.next()
      if (next.done === true) throw new Error(`envd did not start '${command.cmd}'`)
      const event = next.value.event?.event
      if (event?.case !== 'start') continue
      const ended = (async (): Promise<EnvdCommandResult | undefined> => {
        try {
          for (;;) {
            const rest = await events.next()
            if (rest.done === true) return undefined
            const end = rest.value.event?.event
            if (end?.case === 'end') return { exitCode: end.value.exitCode, error: end.value.error }
          }
        } catch (error) {
          if (detach.signal.aborted) return undefined
          throw error
        }
      })()
      return { pid: event.value.pid, ended, detach: () => detach.abort() }
    }
  }

  private async kill(user: string | undefined, pid: number): Promise<void> {
    await this.client.sendSignal(
      { process: { selector: { case: 'pid', value: pid } }, signal: Signal.SIGKILL },
      { headers: this.headers(user) },
    )
  }

  private request(command: EnvdCommand) {
    return {
      process: {
        cmd: command.cmd,
        args: command.args,
        envs: command.envs ?? {},
        cwd: command.cwd,
      },
      stdin: false,
    }
  }

  private headers(user: string | undefined): Record<string, string> {
    const headers: Record<string, string> = {}
    // §3.2: the acting user rides in Basic auth with an empty password.
    if (user !== undefined) {
      headers.authorization = `Basic ${Buffer.from(`${user}:`).toString('base64')}`
    }
    if (this.target.accessToken !== undefined) headers['x-access-token'] = this.target.accessToken
    return headers
  }
}

/** Splits a byte stream into UTF-8 lines, keeping a partial last line for the next chunk. */
class LineSplitter {
  private readonly textDecoder = new TextDecoder()
  private rest = ''

  push(chunk: Uint8Array): string[] {
    const lines = (this.rest + this.textDecoder.decode(chunk, { stream: true })).split('\n')
    this.rest = lines.pop() ?? ''
    return lines
  }

  flush(): string[] {
    const last = this.rest + this.textDecoder.decode()
    this.rest = ''
    return last === '' ? [] : [last]
  }
}
