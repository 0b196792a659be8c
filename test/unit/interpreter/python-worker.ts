import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'

const workerScript = fileURLToPath(
  new URL('../../../src/interpreter/python/sandbar_kernel.py', import.meta.url),
)
// Debian's interpreter, where python3-ipython, -matplotlib, -pandas and -pil are installed
// (scripts/setup.sh); a `python3` earlier on PATH (pyenv) may lack them.
const python = process.env.SANDBAR_TEST_PYTHON ?? '/usr/bin/python3'

/** How the server would start this worker (kernels/kernel.ts). */
export const pythonWorkerCommand = { command: python, args: ['-u', workerScript] }

export type WorkerEvent = {
  id?: number
  type: string
  [field: string]: unknown
}

export type ResultEvent = WorkerEvent & {
  bundle: Record<string, unknown>
  is_main_result: boolean
}

/** A real Python worker speaking the JSON-lines protocol, for tests. */
export class PythonWorker {
  private readonly process: ChildProcessWithoutNullStreams
  private readonly events: WorkerEvent[] = []
  private readonly waiters: Array<() => void> = []
  private nextId = 1
  private buffered = ''

  constructor() {
    this.process = spawn(pythonWorkerCommand.command, pythonWorkerCommand.args, {
      stdio: 'pipe',
    })
    this.process.stdout.setEncoding('utf8')
    this.process.stdout.on('data', (chunk: string) => {
      this.buffered += chunk
      const lines = this.buffered.split('\n')
      this.buffered = lines.pop() ?? ''
      for (const line of lines) {
        if (line) this.events.push(JSON.parse(line) as WorkerEvent)
      }
      for (const wake of this.waiters.splice(0)) wake()
    })
    this.process.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk))
  }

  /** Waits until an event matching `predicate` has arrived and returns it. */
  async waitFor(predicate: (event: WorkerEvent) => boolean, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = this.events.find(predicate)
      if (found) return found
      if (Date.now() > deadline) throw new Error('timed out waiting for a worker event')
      if (this.process.exitCode !== null) throw new Error('the worker exited')
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve)
        setTimeout(resolve, 100)
      })
    }
  }

  ready() {
    return this.waitFor((event) => event.type === 'ready')
  }

  /** Sends a request and returns its id. */
  send(code: string, silent = false) {
    const id = this.nextId++
    this.process.stdin.write(`${JSON.stringify({ id, code, silent })}\n`)
    return id
  }

  /** Runs `code` and returns its events, `done` last. */
  async run(code: string, { silent = false, timeoutMs = 30_000 } = {}) {
    const id = this.send(code, silent)
    return this.eventsOf(id, timeoutMs)
  }

  async eventsOf(id: number, timeoutMs = 30_000) {
    await this.waitFor((event) => event.id === id && event.type === 'done', timeoutMs)
    return this.events.filter((event) => event.id === id)
  }

  interrupt() {
    this.process.kill('SIGINT')
  }

  async stop() {
    if (this.process.exitCode !== null) return
    const exited = once(this.process, 'exit')
    this.process.kill('SIGKILL')
    await exited
  }
}

export function resultsOf(events: WorkerEvent[]) {
  return events.filter((event): event is ResultEvent => event.type === 'result')
}

/** The `text/plain` of the cell's main result. */
export function mainText(events: WorkerEvent[]) {
  const main = resultsOf(events).find((result) => result.is_main_result)
  if (!main) throw new Error(`no main result in ${JSON.stringify(events).slice(0, 2000)}`)
  return main.bundle['text/plain']
}

/** The chart of the single display a cell produced (for `plt.show()` cells). */
export function chartOf(events: WorkerEvent[]) {
  const [display, ...more] = resultsOf(events).filter((result) => !result.is_main_result)
  if (!display || more.length > 0) {
    throw new Error(`expected one display, got ${JSON.stringify(events).slice(0, 2000)}`)
  }
  return display.bundle['e2b/chart'] as Record<string, unknown> & {
    elements: Array<Record<string, unknown>>
  }
}
