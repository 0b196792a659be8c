import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { Kernel, type WorkerCommand } from '../../../../src/interpreter/kernels/kernel.js'
import type { DoneStatus, WorkerEvent } from '../../../../src/interpreter/kernels/worker-event.js'
import { pythonWorkerCommand } from '../python-worker.js'

const javascriptWorkerCommand: WorkerCommand = {
  command: process.execPath,
  args: ['--import', 'tsx', 'src/interpreter/main.ts', 'worker', 'javascript'],
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

describe('a kernel whose worker restarts', () => {
  it('runs nothing for a client gone while it waited for the new worker', async () => {
    const kernel = new Kernel(pythonWorkerCommand, pino({ level: 'silent' }))
    await kernel.start()
    try {
      const gone = new AbortController()
      const events: WorkerEvent[] = []
      const outcome = new Promise<DoneStatus>((resolve) => {
        kernel.onRestart = () =>
          // Once the new worker is starting: the request waits for it, and its client goes.
          setImmediate(() => {
            resolve(kernel.execute("print('ran')", false, (e) => events.push(e), gone.signal))
            gone.abort()
          })
      })
      await kernel.execute(
        'import os, signal\nos.kill(os.getpid(), signal.SIGKILL)',
        true,
        () => {},
      )
      expect(await within(outcome, 10_000, 'the abandoned request')).toBe('abort')
      expect(events).toEqual([])
      // The new worker runs what comes next.
      expect(await kernel.execute('6 * 7', true, () => {})).toBe('ok')
    } finally {
      await kernel.close()
    }
  }, 30_000)
})

describe.each([
  { language: 'python', command: pythonWorkerCommand, endless: 'import time\ntime.sleep(300)' },
  { language: 'javascript', command: javascriptWorkerCommand, endless: 'while (true) {}' },
])('a $language worker', ({ command, endless }) => {
  it('takes an interrupt sent the instant its cell is announced, every time', async () => {
    const kernel = new Kernel(command, pino({ level: 'silent' }))
    await kernel.start()
    try {
      // Sent from the announcement's own dispatch, the interrupt lands in the window between
      // the announcement and the cell's blocking call; the first of these tries used to hang.
      for (let attempt = 0; attempt < 100; attempt++) {
        const interruptOnStart = (event: WorkerEvent) => {
          if (event.type === 'number_of_executions') kernel.interrupt()
        }
        const status = kernel.execute(endless, false, interruptOnStart)
        expect(await within(status, 5_000, `interrupted cell ${attempt}`)).toBe('error')
      }
      const results: WorkerEvent[] = []
      expect(await kernel.execute('6 * 7', false, (event) => results.push(event))).toBe('ok')
      expect(results).toContainEqual(expect.objectContaining({ type: 'result' }))
    } finally {
      await kernel.close()
    }
  }, 120_000)
})
