import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFile } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import type { Logger } from '../../logger.js'
import {
  type DoneStatus,
  readyEventSchema,
  type WorkerEvent,
  workerEventSchema,
} from './worker-event.js'

const STOP_GRACE_MS = 2000
/**
 * An interrupt is sent again at this interval until its run ends. One can land where the
 * worker cannot act on it and be lost: Python flags it just before the cell blocks in
 * `time.sleep`, node takes it just before `breakOnSigint` is armed for a cell's `while (true)`.
 */
const INTERRUPT_REPEAT_MS = 50
/** Added to a worker's OOM badness (-1000…1000): it, not the server, goes first. */
const WORKER_OOM_SCORE_ADJ = 500

export interface WorkerCommand {
  command: string
  args: string[]
}

export type EventListener = (event: WorkerEvent) => void

interface PendingRun {
  onEvent: EventListener
  resolve(status: DoneStatus): void
}

/** What a run in flight reports when its worker goes away (wire contract §1.4). */
const restartedEvent = (id: number): WorkerEvent => ({
  id,
  type: 'error',
  name: 'ContextRestarting',
  value: 'Context was restarted',
  traceback: '',
})

/**
 * One worker process speaking the JSON-lines protocol. A worker that dies unasked is started
 * again; `onRestart` tells the owner at once, before any queued request reaches the new
 * process, which lacks the owner's setup (cwd, env vars).
 */
export class Kernel {
  private child: ChildProcess | undefined
  private ready: Promise<void> = Promise.resolve()
  private readonly pending = new Map<number, PendingRun>()
  private nextId = 1
  private closed = false
  onRestart: () => void = () => {}

  constructor(
    private readonly command: WorkerCommand,
    private readonly logger: Logger,
  ) {}

  start(): Promise<void> {
    this.ready = this.spawnWorker()
    return this.ready
  }

  /**
   * Runs `code` once the worker is ready. A `signal` that fired while the worker (re)started
   * runs nothing ('abort'); once the run is sent, an abort is the caller's `interrupt()`.
   */
  async execute(
    code: string,
    silent: boolean,
    onEvent: EventListener,
    signal?: AbortSignal,
  ): Promise<DoneStatus> {
    await this.ready
    if (signal?.aborted) return 'abort'
    const id = this.nextId++
    const done = new Promise<DoneStatus>((resolve) => this.pending.set(id, { onEvent, resolve }))
    this.child?.stdin?.write(`${JSON.stringify({ id, code, silent })}\n`)
    return done
  }

  /** Interrupts the running request; queued requests run after it (protocol: SIGINT). */
  interrupt(): void {
    const child = this.child
    const [running] = this.pending.keys()
    if (child === undefined || running === undefined) return
    child.kill('SIGINT')
    const repeater = setInterval(() => {
      if (this.child === child && this.pending.has(running)) child.kill('SIGINT')
      else clearInterval(repeater)
    }, INTERRUPT_REPEAT_MS)
    repeater.unref()
  }

  async restart(): Promise<void> {
    await this.stopWorker()
    await this.start()
  }

  async close(): Promise<void> {
    this.closed = true
    await this.stopWorker()
  }

  /**
   * Out of memory, the kernel should end a worker (one context restarts) rather than the
   * server (every context is lost): the server and the rest keep the default score.
   */
  private async preferForOomKill(pid: number): Promise<void> {
    await writeFile(`/proc/${pid}/oom_score_adj`, String(WORKER_OOM_SCORE_ADJ)).catch(
      (error: unknown) => this.logger.debug({ err: error, pid }, 'oom_score_adj not set'),
    )
  }

  private async spawnWorker(): Promise<void> {
    const child = spawn(this.command.command, this.command.args, {
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    this.child = child
    if (child.pid !== undefined) void this.preferForOomKill(child.pid)
    child.stderr?.on('data', (chunk: Buffer) =>
      this.logger.debug({ stderr: chunk.toString() }, 'interpreter worker diagnostics'),
    )
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
    let markReady: () => void = () => {}
    const readySeen = new Promise<void>((resolve) => {
      markReady = resolve
    })
    lines.on('line', (line) => {
      let json: unknown
      try {
        json = JSON.parse(line)
      } catch {
        this.logger.warn({ line }, 'interpreter worker wrote a line that is not JSON')
        return
      }
      if (readyEventSchema.safeParse(json).success) return markReady()
      const parsed = workerEventSchema.safeParse(json)
      if (parsed.success) this.dispatch(parsed.data)
    })
    child.on('exit', (code, signal) => this.onExit(child, code, signal))
    const exited = once(child, 'exit').then(([code]) => {
      throw new Error(`worker ${this.command.command} exited with ${code} before it was ready`)
    })
    const failed = once(child, 'error').then(([error]) => {
      throw error
    })
    await Promise.race([readySeen, exited, failed])
  }

  private dispatch(event: WorkerEvent): void {
    const run = this.pending.get(event.id)
    if (run === undefined) return
    if (event.type === 'done') {
      this.pending.delete(event.id)
      run.resolve(event.status)
    } else {
      run.onEvent(event)
    }
  }

  private onExit(child: ChildProcess, code: number | null, signal: string | null): void {
    if (this.child !== child) return
    this.child = undefined
    if (!this.closed) {
      this.logger.warn({ code, signal }, 'interpreter worker died; starting it again')
      this.onRestart()
      this.ready = this.spawnWorker()
      this.ready.catch((error) =>
        this.logger.error({ error }, 'interpreter worker failed to restart'),
      )
    }
    this.failPending()
  }

  private failPending(): void {
    for (const [id, run] of this.pending) {
      run.onEvent(restartedEvent(id))
      run.resolve('error')
    }
    this.pending.clear()
  }

  private async stopWorker(): Promise<void> {
    const child = this.child
    if (child === undefined) return
    this.child = undefined
    this.failPending()
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      // SIGTERM lets a worker end what it started (the bash worker's shell); then SIGKILL.
      child.kill('SIGTERM')
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS)
      await exited
      clearTimeout(killer)
    }
  }
}
