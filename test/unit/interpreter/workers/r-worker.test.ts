import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const rMissing = (() => {
  try {
    execFileSync('R', ['--version'], { stdio: 'ignore' })
    return undefined
  } catch {
    return 'R is not installed'
  }
})()

type Event = { id?: number; type: string; [field: string]: unknown }

/** The R worker from source, as the bundle runs it (`<bundle> worker r`). */
function startWorker() {
  const worker = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/interpreter/main.ts', 'worker', 'r'],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  )
  const events: Event[] = []
  const arrived: Array<() => void> = []
  createInterface({ input: worker.stdout }).on('line', (line) => {
    events.push(JSON.parse(line) as Event)
    for (const wake of arrived.splice(0)) wake()
  })
  const waitFor = async (predicate: (event: Event) => boolean) => {
    while (!events.some(predicate)) {
      if (worker.exitCode !== null) throw new Error('the worker exited')
      await new Promise<void>((resolve) => arrived.push(resolve))
    }
  }
  let nextId = 1
  const send = (code: string) => {
    const id = nextId++
    worker.stdin.write(`${JSON.stringify({ id, code, silent: false })}\n`)
    return id
  }
  const eventsOf = async (id: number) => {
    await waitFor((event) => event.id === id && event.type === 'done')
    return events.filter((event) => event.id === id)
  }
  return { worker, waitFor, send, eventsOf }
}

describe.skipIf(rMissing !== undefined)(`r worker (${rMissing ?? 'R available'})`, () => {
  let r: ReturnType<typeof startWorker>

  beforeAll(async () => {
    r = startWorker()
    await r.waitFor((event) => event.type === 'ready')
  }, 30_000)
  afterAll(async () => {
    if (r.worker.exitCode !== null) return
    const exited = once(r.worker, 'exit')
    r.worker.kill('SIGTERM')
    await exited
  })

  it('speaks the protocol: count, result, done', async () => {
    const id = r.send('1 + 1')
    expect(await r.eventsOf(id)).toEqual([
      { id, type: 'number_of_executions', execution_count: 1 },
      { id, type: 'result', bundle: { 'text/plain': '[1] 2' }, is_main_result: false },
      { id, type: 'done', status: 'ok' },
    ])
  }, 30_000)

  it('interrupts a cell whose interrupt came before R took it', async () => {
    await r.eventsOf(r.send('kept <- "yes"'))
    const id = r.send('Sys.sleep(300)')
    r.worker.kill('SIGINT')
    const started = Date.now()
    expect((await r.eventsOf(id)).at(-1)).toEqual({ id, type: 'done', status: 'abort' })
    expect(Date.now() - started).toBeLessThan(5000)
    const after = await r.eventsOf(r.send('kept'))
    expect(after).toContainEqual(expect.objectContaining({ bundle: { 'text/plain': '[1] "yes"' } }))
  }, 30_000)

  it('lets an interrupt between cells pass without touching the next cell', async () => {
    r.worker.kill('SIGINT')
    await new Promise((resolve) => setTimeout(resolve, 200))
    const events = await r.eventsOf(r.send('Sys.sleep(0.5); "slept"'))
    expect(events.at(-1)).toMatchObject({ type: 'done', status: 'ok' })
    expect(events).toContainEqual(
      expect.objectContaining({ bundle: { 'text/plain': '[1] "slept"' } }),
    )
  }, 30_000)

  it('ends R and the programs it started on SIGTERM', async () => {
    const other = startWorker()
    await other.waitFor((event) => event.type === 'ready')
    const id = other.send('cat(Sys.getpid(), "\\n"); system("sleep 300 & echo $!")')
    const stdout = (await other.eventsOf(id)).filter((event) => event.type === 'stdout')
    const pids = stdout
      .map((event) => String(event.text))
      .join('')
      .trim()
      .split(/\s+/)
      .map(Number)
    expect(pids).toHaveLength(2)
    expect(pids.every(alive)).toBe(true)
    const exited = once(other.worker, 'exit')
    other.worker.kill('SIGTERM')
    expect(await exited).toEqual([143, null])
    const deadline = Date.now() + 5000
    while (pids.some(alive) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(pids.filter(alive)).toEqual([])
  }, 30_000)

  it('ends R when the server goes away and its requests end', async () => {
    const other = startWorker()
    const id = other.send('cat(Sys.getpid(), "\\n")')
    const stdout = (await other.eventsOf(id)).find((event) => event.type === 'stdout')
    const pid = Number(stdout?.text)
    expect(alive(pid)).toBe(true)
    const exited = once(other.worker, 'exit')
    other.worker.stdin.end()
    expect(await exited).toEqual([0, null])
    const deadline = Date.now() + 5000
    while (alive(pid) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(alive(pid)).toBe(false)
  }, 30_000)
})

/** Whether a process runs: a zombie, ended but not yet reaped, does not. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}
