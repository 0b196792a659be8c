import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mainText, PythonWorker, resultsOf } from './python-worker.js'

describe('python worker protocol', () => {
  let worker: PythonWorker

  beforeAll(async () => {
    worker = new PythonWorker()
    await worker.ready()
  }, 60_000)
  afterAll(() => worker.stop())

  it('answers the final expression as the main result, counting executions', async () => {
    const first = await worker.run('x = 1; x')
    expect(first).toEqual([
      { id: expect.any(Number), type: 'number_of_executions', execution_count: 1 },
      {
        id: expect.any(Number),
        type: 'result',
        bundle: { 'text/plain': '1' },
        is_main_result: true,
      },
      { id: expect.any(Number), type: 'done', status: 'ok' },
    ])
    const second = await worker.run('x + 1')
    expect(second[0]).toMatchObject({ type: 'number_of_executions', execution_count: 2 })
    expect(mainText(second)).toBe('2')
  })

  it('runs silent requests without counting them or announcing a count', async () => {
    const silent = await worker.run('import os\nos.environ["SANDBAR_T"] = "v"', { silent: true })
    expect(silent.map((event) => event.type)).toEqual(['done'])
    const after = await worker.run('os.environ["SANDBAR_T"]')
    expect(after[0]).toMatchObject({ type: 'number_of_executions', execution_count: 3 })
    expect(mainText(after)).toBe("'v'")
  })

  it('sends a print as one chunk with a timestamp, and writes apart as chunks apart', async () => {
    const print = await worker.run('print("hello")')
    expect(print.filter((event) => event.type === 'stdout')).toEqual([
      { id: expect.any(Number), type: 'stdout', text: 'hello\n', timestamp: expect.any(String) },
    ])
    const events = await worker.run(
      [
        'import sys, time',
        'print("one")',
        'time.sleep(0.5)',
        'print("two")',
        'print("oops", file=sys.stderr)',
        'sys.stdout.write("tail")',
      ].join('\n'),
    )
    const streams = events.filter((event) => event.type === 'stdout' || event.type === 'stderr')
    expect(streams.map((event) => [event.type, event.text])).toEqual([
      ['stdout', 'one\n'],
      ['stdout', 'two\n'],
      ['stderr', 'oops\n'],
      ['stdout', 'tail'],
    ])
    const times = streams.map((event) => Date.parse(String(event.timestamp)))
    expect(times.every((time) => Number.isFinite(time))).toBe(true)
    const [one = 0, two = 0] = times
    // The first chunk went out while the cell slept, stamped with its own time.
    expect(two - one).toBeGreaterThanOrEqual(450)
    // sys.stdout.write returns the length written: the main result of the cell.
    expect(mainText(events)).toBe('4')
  })

  it('streams output while the cell still runs', async () => {
    const id = worker.send('import time\nprint("early")\ntime.sleep(2)\nprint("late")')
    const early = await worker.waitFor((event) => event.id === id && event.type === 'stdout', 1500)
    expect(early.text).toBe('early\n')
    const events = await worker.eventsOf(id)
    expect(events.filter((event) => event.type === 'stdout').map((event) => event.text)).toEqual([
      'early\n',
      'late\n',
    ])
  })

  it('turns output of subprocesses into events before done', async () => {
    const events = await worker.run('!echo from-shell; echo shell-err >&2')
    expect(events.filter((event) => event.type === 'stdout').map((event) => event.text)).toEqual([
      'from-shell\n',
    ])
    expect(events.filter((event) => event.type === 'stderr').map((event) => event.text)).toEqual([
      'shell-err\n',
    ])
    expect(events.at(-1)).toMatchObject({ type: 'done', status: 'ok' })
  })

  it('keeps user output out of the protocol stream even when written to fd 1', async () => {
    const events = await worker.run('import os\nos.write(1, b"{\\"type\\": \\"done\\"}\\n")\nNone')
    expect(events.filter((event) => event.type === 'stdout').map((event) => event.text)).toEqual([
      '{"type": "done"}\n',
    ])
    expect(events.at(-1)).toMatchObject({ type: 'done', status: 'ok' })
  })

  it('tells displays from the main result', async () => {
    const events = await worker.run(
      'from IPython.display import display, Markdown\ndisplay(Markdown("**hi**"))\n"end"',
    )
    const results = resultsOf(events)
    expect(results).toHaveLength(2)
    expect(results[0]).toMatchObject({
      is_main_result: false,
      bundle: { 'text/markdown': '**hi**' },
    })
    expect(results[1]).toMatchObject({ is_main_result: true, bundle: { 'text/plain': "'end'" } })
  })

  it('reports an error with name, value and a colourless joined traceback', async () => {
    const events = await worker.run('undefined_name')
    const error = events.find((event) => event.type === 'error')
    expect(error).toMatchObject({
      name: 'NameError',
      value: "name 'undefined_name' is not defined",
    })
    const traceback = String(error?.traceback)
    expect(traceback).toContain('----> 1 undefined_name')
    expect(traceback).toContain("NameError: name 'undefined_name' is not defined")
    expect(traceback).not.toContain('\x1b[')
    // The frames are joined with no separator: the header's dashes run into the name.
    expect(traceback).toMatch(/-NameError/)
    expect(events.at(-1)).toMatchObject({ type: 'done', status: 'error' })
  })

  it('reports a syntax error as an error', async () => {
    const events = await worker.run('def f(:\n  pass')
    expect(events.find((event) => event.type === 'error')).toMatchObject({ name: 'SyntaxError' })
    expect(events.at(-1)).toMatchObject({ type: 'done', status: 'error' })
  })

  it('gives input() an end of file instead of the protocol stream', async () => {
    const events = await worker.run('input()')
    expect(events.find((event) => event.type === 'error')).toMatchObject({ name: 'EOFError' })
  })

  it('interrupts a running cell on SIGINT and then answers the next one', async () => {
    const sleeping = worker.send('import time\ntime.sleep(300)')
    await worker.waitFor((event) => event.id === sleeping && event.type === 'number_of_executions')
    // The sleep has started once the count is out; give it a moment to be inside sleep().
    await new Promise((resolve) => setTimeout(resolve, 200))
    const queued = worker.send('1 + 1')
    worker.interrupt()
    const interrupted = await worker.eventsOf(sleeping, 10_000)
    const error = interrupted.find((event) => event.type === 'error')
    expect(error).toMatchObject({ name: 'KeyboardInterrupt', value: '' })
    // The traceback shows the user's code only, none of the worker's frames.
    expect(error?.traceback).toContain('----> 2 time.sleep(300)')
    expect(error?.traceback).not.toContain('sandbar_kernel')
    expect(interrupted.at(-1)).toMatchObject({ type: 'done', status: 'error' })
    const next = await worker.eventsOf(queued, 10_000)
    expect(mainText(next)).toBe('2')
  })

  it('interrupts a cell once, leaving the code that catches it to finish', async () => {
    const cleanup = [
      'import time',
      'try:',
      '    time.sleep(300)',
      'except KeyboardInterrupt:',
      '    time.sleep(0.3)',
      '    print("cleaned up")',
    ].join('\n')
    const id = worker.send(cleanup)
    await worker.waitFor((event) => event.id === id && event.type === 'number_of_executions')
    await new Promise((resolve) => setTimeout(resolve, 100))
    worker.interrupt()
    // The server's repeat (kernels/kernel.ts), which lands in the cleanup.
    await new Promise((resolve) => setTimeout(resolve, 100))
    worker.interrupt()
    const events = await worker.eventsOf(id, 10_000)
    expect(events.filter((event) => event.type === 'stdout')).toMatchObject([
      { text: 'cleaned up\n' },
    ])
    expect(events.at(-1)).toMatchObject({ type: 'done', status: 'ok' })
  })

  it('ignores SIGINT between cells', async () => {
    worker.interrupt()
    await new Promise((resolve) => setTimeout(resolve, 200))
    const events = await worker.run('"alive"')
    expect(mainText(events)).toBe("'alive'")
  })
})
