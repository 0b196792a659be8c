import { setImmediate as afterPendingOutput } from 'node:timers/promises'
import type { DoneStatus } from '../kernels/worker-event.js'
import { OutputLines } from './output-lines.js'
import { type DriverRecord, RSession } from './r-session.js'
import { type Emit, protocolEmitter, serveRequests, timestamp } from './worker-protocol.js'

/** Output of a cell's children still in the pipes when `done` arrives is read within this time. */
const DRAIN_MS = 20
/** How long the start of a line waits for its end before it is sent alone (output-lines.ts). */
const LINE_WAIT_MS = 50
/**
 * An interrupt is sent again at this interval until the cell ends. One that lands just before
 * R starts a program (`system()` writes the cell's output, then forks) reaches R alone: R keeps
 * it pending and waits for the program, which never got it.
 */
const INTERRUPT_REPEAT_MS = 200

interface RunningCell {
  id: number
  /** The driver has taken the cell, so a SIGINT now interrupts this cell and no other. */
  started: boolean
  interruptWanted: boolean
  /** Sends the interrupt again until the cell ends. */
  repeater?: NodeJS.Timeout
  finish(status: DoneStatus): void
}

/** Interrupts the cell's process group now and then again until the cell ends. */
function interruptCell(cell: RunningCell, session: RSession): void {
  if (cell.repeater !== undefined) return
  session.signal('SIGINT')
  cell.repeater = setInterval(() => session.signal('SIGINT'), INTERRUPT_REPEAT_MS)
}

/**
 * The R worker: one persistent R session (r-session.ts) whose state (variables, functions,
 * loaded packages, working directory) cells share. The cell's stdout and stderr are streamed
 * as they are written, in whole lines (output-lines.ts); what the driver (r-driver.ts) reports
 * becomes results and errors.
 *
 * Values are `result`s with `text/plain` only and `is_main_result` false: IRkernel, the `r`
 * kernel of E2B's template, sends every visible value as `display_data`, which E2B's server
 * turns into a result that is not the main one (its messaging.py). IRkernel adds html,
 * markdown and latex forms from the `repr` package, which Debian's R lacks. Errors are named
 * `ERROR`, IRkernel's ename.
 *
 * SIGINT interrupts the running cell, as Jupyter's interrupt does IRkernel's: R's process group
 * gets it, the run ends `abort`, and the session and its state live on. A program the cell
 * started (`system("sleep 60")`) ends too; R, which ignores interrupts while it waits for one,
 * then goes on with the cell until the interrupt, sent again until the cell ends, stops it.
 * SIGTERM, and R's own end (a cell's `q()`), end R's process group and this worker: the server
 * then starts a new worker and puts back the context's cwd and env vars, as after a restart.
 */
export function runRWorker(): void {
  const emit = protocolEmitter()
  let currentId = 0
  let cell: RunningCell | undefined
  let handled = Promise.resolve()
  const lines = (type: 'stdout' | 'stderr') =>
    new OutputLines(
      (text) => emit({ id: currentId, type, text, timestamp: timestamp() }),
      LINE_WAIT_MS,
    )
  const output = { stdout: lines('stdout'), stderr: lines('stderr') }
  const flushOutput = () => {
    output.stdout.flush()
    output.stderr.flush()
  }
  const session: RSession = new RSession({
    output: (stream, text) => output[stream].write(text),
    // One at a time, in order: a record may wait for the output written before it.
    record: (record) => {
      const context = { emit, flushOutput, id: currentId, cell, session }
      handled = handled.then(() => handleRecord(record, context))
    },
    gone: () => end(1),
  })
  const end = (code: number) => {
    session.end()
    process.exit(code)
  }
  process.on('SIGTERM', () => end(143))
  // The server has gone without a word: no one is left to read what R would say.
  process.stdin.on('end', () => end(0))
  process.on('SIGINT', () => {
    if (cell?.started) interruptCell(cell, session)
    else if (cell !== undefined) cell.interruptWanted = true
  })

  let executionCount = 0
  serveRequests(async ({ id, code, silent }) => {
    currentId = id
    if (!silent) {
      executionCount += 1
      emit({ id, type: 'number_of_executions', execution_count: executionCount })
    }
    const status = await new Promise<DoneStatus>((finish) => {
      cell = { id, started: false, interruptWanted: false, finish }
      session.run(code)
    })
    clearInterval(cell?.repeater)
    cell = undefined
    emit({ id, type: 'done', status })
  })
}

interface RecordContext {
  emit: Emit
  flushOutput(): void
  id: number
  cell: RunningCell | undefined
  session: RSession
}

async function handleRecord(record: DriverRecord, context: RecordContext): Promise<void> {
  const { emit, flushOutput, id, cell, session } = context
  switch (record.type) {
    case 'ready':
      return emit({ type: 'ready' })
    case 'started':
      if (cell === undefined) return
      cell.started = true
      if (cell.interruptWanted) interruptCell(cell, session)
      return
    case 'result':
      // R flushed the cell's output before the record, so it is in the pipes already: read
      // in this turn of the event loop, it goes out first.
      await afterPendingOutput()
      flushOutput()
      return emit({
        id,
        type: 'result',
        bundle: { 'text/plain': record.text },
        is_main_result: false,
      })
    case 'error':
      await afterPendingOutput()
      flushOutput()
      return emit({
        id,
        type: 'error',
        name: 'ERROR',
        value: record.value,
        traceback: record.traceback,
      })
    case 'done':
      await new Promise((resolve) => setTimeout(resolve, DRAIN_MS))
      flushOutput()
      return cell?.finish(record.status)
  }
}
