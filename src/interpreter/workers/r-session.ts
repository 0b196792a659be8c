import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { constants, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs'
import { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { z } from 'zod'
import { R_DRIVER } from './r-driver.js'

/** What the driver (r-driver.ts) writes on the status FIFO. */
const recordSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('started') }),
  z.object({ type: z.literal('result'), text: z.string() }),
  z.object({ type: z.literal('error'), value: z.string(), traceback: z.string() }),
  z.object({ type: z.literal('done'), status: z.enum(['ok', 'error', 'abort']) }),
])
export type DriverRecord = z.infer<typeof recordSchema>

export interface RSessionListener {
  output(stream: 'stdout' | 'stderr', text: string): void
  record(record: DriverRecord): void
  /** R has ended, or could not start. */
  gone(): void
}

/**
 * One R process (Debian's r-base-core) running the driver. A cell reaches it as a file and a
 * line on the control FIFO; the driver's records come back on the status FIFO, so that R's
 * stdout and stderr carry only the cells' own output. R's stdin is /dev/null: under IRkernel
 * too a cell can read no input.
 */
export class RSession {
  private readonly dir = mkdtempSync(path.join(tmpdir(), 'sandbar-r-'))
  private readonly cellFile = path.join(this.dir, 'cell.R')
  private readonly control: Socket
  private readonly process: ChildProcess

  constructor(listener: RSessionListener) {
    const driverFile = path.join(this.dir, 'driver.R')
    const controlFile = path.join(this.dir, 'control')
    const statusFile = path.join(this.dir, 'status')
    writeFileSync(driverFile, R_DRIVER)
    execFileSync('mkfifo', ['-m', '600', controlFile, statusFile])
    this.control = openFifo(controlFile, 'write')
    // The driver writes whole JSON lines; anything else means the session is broken, and the
    // throw ends this worker, which the server then starts again.
    createInterface({ input: openFifo(statusFile, 'read') }).on('line', (line) => {
      const record = recordSchema.safeParse(JSON.parse(line))
      if (record.success) listener.record(record.data)
    })
    this.process = spawn('R', rArgs(driverFile, controlFile, statusFile, this.cellFile), {
      // Its own process group, which an interrupt or the end reaches whole.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      // IRkernel's `r` runs in E2B's image under LANG C.UTF-8; in the C locale R would print
      // text beyond ASCII as <U+00E9> escapes.
      env: { LANG: 'C.UTF-8', ...process.env },
    })
    for (const stream of ['stdout', 'stderr'] as const) {
      // Decoded as a whole: a character split between two reads stays one character.
      this.process[stream]?.setEncoding('utf8')
      this.process[stream]?.on('data', (text: string) => listener.output(stream, text))
    }
    this.process.on('error', () => listener.gone())
    this.process.on('exit', () => listener.gone())
  }

  run(code: string): void {
    writeFileSync(this.cellFile, code)
    this.control.write('run\n')
  }

  /** Signals R's process group: R and the programs a cell started. */
  signal(signal: NodeJS.Signals): void {
    try {
      if (this.process.pid !== undefined) process.kill(-this.process.pid, signal)
    } catch {
      // The group has ended already: nothing is left to signal.
    }
  }

  end(): void {
    this.signal('SIGKILL')
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/**
 * `R -f <driver> --args <control> <status> <cell>`. Not `--vanilla`: like IRkernel's `R -e`,
 * R reads the site and user profiles. `--no-restore`: a `.RData` left in the directory the
 * worker starts in is not loaded into a new context.
 */
function rArgs(driver: string, control: string, status: string, cell: string): string[] {
  return ['--quiet', '--no-echo', '--no-restore', '--no-save', '-f', driver, '--args'].concat([
    control,
    status,
    cell,
  ])
}

/**
 * A FIFO as a stream, opened read-write: on Linux that neither waits for R to open the other
 * end nor reads as ended before it has. When this worker dies, the control FIFO has no writer
 * left, R reads its end, and the driver stops.
 */
function openFifo(file: string, direction: 'read' | 'write'): Socket {
  const fd = openSync(file, constants.O_RDWR | constants.O_NONBLOCK)
  return new Socket({ fd, readable: direction === 'read', writable: direction === 'write' })
}
