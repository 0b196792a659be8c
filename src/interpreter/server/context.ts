import { randomUUID } from 'node:crypto'
import type { Logger } from '../../logger.js'
import { type EventListener, Kernel, type WorkerCommand } from '../kernels/kernel.js'
import type { LanguageSnippets } from '../kernels/language.js'
import type { DoneStatus } from '../kernels/worker-event.js'

export interface ContextInfo {
  id: string
  language: string
  cwd: string
}

export interface RunRequest {
  code: string
  envVars: Record<string, string>
  /** Reads the sandbox-level env vars (envd `/envs`), once per worker process. */
  sandboxEnvs: () => Promise<Record<string, string>>
  onEvent: EventListener
  /** Aborted when the client goes away: the run is interrupted. */
  signal: AbortSignal
}

const ignore = () => {}

/**
 * A context (wire contract §1.7): a kernel, its cwd, and a queue so that one execution runs
 * at a time, with its env-var set-up before and clean-up after.
 */
export class Context {
  readonly id = randomUUID()
  private readonly kernel: Kernel
  private queue: Promise<unknown> = Promise.resolve()
  private prepared = false
  private envsInjected = false
  private sandboxEnvs: Record<string, string> = {}

  constructor(
    readonly language: string,
    readonly cwd: string,
    command: WorkerCommand,
    private readonly snippets: LanguageSnippets,
    logger: Logger,
  ) {
    this.kernel = new Kernel(command, logger.child({ contextId: this.id, language }))
    this.kernel.onRestart = () => {
      this.prepared = false
    }
  }

  get info(): ContextInfo {
    return { id: this.id, language: this.language, cwd: this.cwd }
  }

  /** Starts the worker and moves it to the cwd; throws `Failed to set working directory`. */
  async start(): Promise<void> {
    await this.kernel.start()
    await this.prepare()
  }

  run(request: RunRequest): Promise<DoneStatus> {
    return this.serially(() => this.runNow(request))
  }

  restart(): Promise<void> {
    this.prepared = false
    return this.kernel.restart().then(() => this.prepare())
  }

  close(): Promise<void> {
    return this.kernel.close()
  }

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const result = this.queue.then(task)
    this.queue = result.catch(ignore)
    return result
  }

  private async prepare(): Promise<void> {
    if (this.prepared) return
    const status = await this.kernel.execute(this.snippets.chdir(this.cwd), true, ignore)
    if (status !== 'ok') throw new Error('Failed to set working directory')
    this.prepared = true
    // A new worker process: the sandbox-level vars are injected again on its first run.
    this.envsInjected = false
    this.sandboxEnvs = {}
  }

  private async runNow(request: RunRequest): Promise<DoneStatus> {
    await this.prepare()
    if (!this.envsInjected) {
      this.sandboxEnvs = await request.sandboxEnvs()
      for (const [name, value] of Object.entries(this.sandboxEnvs)) {
        await this.silently(this.snippets.setEnv(name, value))
      }
      this.envsInjected = true
    }
    for (const [name, value] of Object.entries(request.envVars)) {
      await this.silently(this.snippets.setEnv(name, value))
    }
    const interrupt = () => this.kernel.interrupt()
    request.signal.addEventListener('abort', interrupt)
    try {
      // A client gone while the run waited in the queue, or for a restarting worker, gets
      // nothing run for it: execute answers 'abort' for a signal that already fired.
      return await this.kernel.execute(request.code, false, request.onEvent, request.signal)
    } finally {
      request.signal.removeEventListener('abort', interrupt)
      for (const name of Object.keys(request.envVars)) {
        const sandboxValue = this.sandboxEnvs[name]
        await this.silently(
          sandboxValue === undefined
            ? this.snippets.unsetEnv(name)
            : this.snippets.setEnv(name, sandboxValue),
        )
      }
    }
  }

  private async silently(code: string): Promise<void> {
    await this.kernel.execute(code, true, ignore)
  }
}
