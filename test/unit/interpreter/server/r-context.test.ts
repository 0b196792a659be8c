import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type Interpreter,
  startInterpreter,
  type WorkerCommand,
} from '../../../../src/interpreter/index.js'

// Debian's r-base-core (scripts/setup.sh).
const rMissing = (() => {
  try {
    execFileSync('R', ['--version'], { stdio: 'ignore' })
    return undefined
  } catch {
    return 'R is not installed'
  }
})()

/** The R worker from source, as the bundle would run it (`<bundle> worker r`). */
function workerCommand(language: string): WorkerCommand | undefined {
  if (language !== 'r') return undefined
  return {
    command: process.execPath,
    args: ['--import', 'tsx', 'src/interpreter/main.ts', 'worker', 'r'],
  }
}

const HOME = mkdtempSync(path.join(tmpdir(), 'sandbar-r-home-'))
const ACCESS_TOKEN = 'r-access-token'
let interpreter: Interpreter
let base: string
let envd: Server

type Line = Record<string, unknown> & { type: string }

async function post(route: string, body: object): Promise<Response> {
  return fetch(`${base}${route}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Access-Token': ACCESS_TOKEN },
    body: JSON.stringify(body),
  })
}

async function execute(body: object): Promise<Line[]> {
  const response = await post('/execute', { language: 'r', ...body })
  expect(response.status).toBe(200)
  const lines = (await response.text()).split('\n').filter((line) => line !== '')
  return lines.map((line) => JSON.parse(line) as Line).filter((line) => line.type !== 'keepalive')
}

const textsOf = (lines: Line[], type: string) =>
  lines.filter((line) => line.type === type).map((line) => line.text)

/** Reads a streamed run until `marker` has arrived; the run goes on. */
async function startRun(body: object, marker: string, signal: AbortSignal): Promise<void> {
  const response = await fetch(`${base}/execute`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ language: 'r', ...body }),
    signal,
  })
  const reader = response.body?.getReader()
  let received = ''
  while (!received.includes(marker)) {
    const chunk = await reader?.read()
    expect(chunk?.done).toBe(false)
    received += new TextDecoder().decode(chunk?.value)
  }
}

describe.skipIf(rMissing !== undefined)(`r contexts (${rMissing ?? 'R available'})`, () => {
  beforeAll(async () => {
    // envd's `/envs` stand-in: the sandbox-level vars.
    envd = createServer((req, res) => {
      if (req.url !== '/envs' || req.headers['x-access-token'] !== ACCESS_TOKEN) {
        res.writeHead(401).end()
        return
      }
      res.setHeader('Content-Type', 'application/json')
      res.end(JSON.stringify({ SANDBOX_LEVEL: 'from-envd', SHARED: 'sandbox-value' }))
    })
    envd.listen(0, '127.0.0.1')
    await new Promise((resolve) => envd.once('listening', resolve))
    interpreter = await startInterpreter({
      port: 0,
      host: '127.0.0.1',
      envdUrl: `http://127.0.0.1:${(envd.address() as AddressInfo).port}`,
      keepaliveMs: 1000,
      workerCommand,
      defaultCwd: HOME,
      defaultLanguages: ['r'],
      logger: pino({ level: 'silent' }),
    })
    base = `http://127.0.0.1:${interpreter.port}`
  }, 60_000)

  afterAll(async () => {
    await interpreter?.close()
    envd?.close()
    rmSync(HOME, { recursive: true, force: true })
  })

  it('answers a visible value as R prints it, a result that is not the main one', async () => {
    const lines = await execute({ code: '1 + 1' })
    expect(lines).toEqual([
      { type: 'number_of_executions', execution_count: expect.any(Number) },
      { type: 'result', text: '[1] 2', extra: {}, is_main_result: false },
      { type: 'end_of_execution' },
    ])
    const several = await execute({
      code: 'x <- 1; x + 1\ninvisible(7)\nc(a = 1, b = 22)\n"q\\"b\\\\s\\001é"',
    })
    expect(textsOf(several, 'result')).toEqual([
      '[1] 2',
      ' a  b \n 1 22 ',
      '[1] "q\\"b\\\\s\\001é"',
    ])
  }, 30_000)

  it('counts user runs only, not the env and cwd set-up', async () => {
    const { id } = (await (await post('/contexts', { language: 'r' })).json()) as { id: string }
    const first = await execute({ code: '1', language: undefined, context_id: id })
    const second = await execute({
      code: '2',
      language: undefined,
      context_id: id,
      env_vars: { A: 'b' },
    })
    expect(first[0]).toEqual({ type: 'number_of_executions', execution_count: 1 })
    expect(second[0]).toEqual({ type: 'number_of_executions', execution_count: 2 })
    await fetch(`${base}/contexts/${id}`, { method: 'DELETE' })
  }, 30_000)

  it('streams stdout and stderr as they are written, a line to an event', async () => {
    const lines = await execute({
      code: 'cat("one\\n"); Sys.sleep(0.3); print("two"); message("oops"); warning("careful")',
    })
    expect(textsOf(lines, 'stdout')).toEqual(['one\n', '[1] "two"\n'])
    // dQuote's quotes are curly in a UTF-8 locale, plain in C.
    expect(textsOf(lines, 'stderr').join('')).toMatch(/^oops\nWarning message:\n.careful.\n$/)
    const [one, two] = lines.filter((line) => line.type === 'stdout')
    const apart = Date.parse(String(two?.timestamp)) - Date.parse(String(one?.timestamp))
    expect(apart).toBeGreaterThanOrEqual(250)
    expect(lines.some((line) => line.type === 'result')).toBe(false)
  }, 30_000)

  it('keeps variables, functions and attached packages from cell to cell', async () => {
    await execute({ code: 'kept <- 41\nnext_of <- function(n) n + 1\nlibrary(tools)' })
    const lines = await execute({ code: 'next_of(kept)\n"package:tools" %in% search()' })
    expect(textsOf(lines, 'result')).toEqual(['[1] 42', '[1] TRUE'])
  }, 30_000)

  it('keeps its own machinery out of the global environment and out of reach of cells', async () => {
    const { id } = (await (await post('/contexts', { language: 'r' })).json()) as { id: string }
    const run = (code: string) => execute({ code, language: undefined, context_id: id })
    expect(textsOf(await run('ls(all.names = TRUE)'), 'result')).toEqual(['character(0)'])
    await run('send <- function(...) stop("not the driver\'s")\nwriteLines <- function(...) NULL')
    expect(textsOf(await run('1 + 1'), 'result')).toEqual(['[1] 2'])
    await fetch(`${base}/contexts/${id}`, { method: 'DELETE' })
  }, 30_000)

  it("starts R again after a cell quits it, back in the context's cwd", async () => {
    const { id } = (await (await post('/contexts', { language: 'r', cwd: '/tmp' })).json()) as {
      id: string
    }
    const run = (code: string) => execute({ code, language: undefined, context_id: id })
    await run('setwd("/")')
    expect((await run('q()')).find((line) => line.type === 'error')).toMatchObject({
      name: 'ContextRestarting',
    })
    expect(textsOf(await run('getwd()'), 'result')).toEqual(['[1] "/tmp"'])
    await fetch(`${base}/contexts/${id}`, { method: 'DELETE' })
  }, 30_000)

  it('reports an error as IRkernel does, stops the cell there, and runs the next cell', async () => {
    const lines = await execute({
      code: 'fails <- function() stop("boom")\ncat("before\\n")\nfails()\ncat("after\\n")',
    })
    expect(textsOf(lines, 'stdout')).toEqual(['before\n'])
    expect(lines.filter((line) => line.type === 'error')).toEqual([
      {
        type: 'error',
        name: 'ERROR',
        value: 'Error in fails(): boom\n',
        traceback: 'Error in fails(): boom\nTraceback:\n1. fails()\n2. stop("boom")',
      },
    ])
    expect(lines.at(-1)).toEqual({ type: 'end_of_execution' })
    const topLevel = await execute({ code: 'no_such_name' })
    expect(topLevel.find((line) => line.type === 'error')).toMatchObject({
      value: "Error: object 'no_such_name' not found\n",
    })
    const parse = await execute({ code: '1 +' })
    expect(String(parse.find((line) => line.type === 'error')?.value)).toMatch(
      /^Error: <text>:2:0: unexpected end of input/,
    )
    expect(textsOf(await execute({ code: '6 * 7' }), 'result')).toEqual(['[1] 42'])
  }, 30_000)

  it('sees envd vars and per-run vars through Sys.getenv, then puts them back', async () => {
    const tricky = 'it\'s "$HOME" \\ \\u00e9 é\n\ttab'
    const read =
      'paste(Sys.getenv(c("SANDBOX_LEVEL", "SHARED", "PER_RUN"), unset = "unset"), collapse = "|")'
    const during = await execute({
      code: `cat(Sys.getenv("TRICKY"))\n${read}`,
      env_vars: { SHARED: 'run', PER_RUN: 'yes', TRICKY: tricky },
    })
    expect(textsOf(during, 'stdout').join('')).toBe(tricky)
    expect(textsOf(during, 'result')).toEqual(['[1] "from-envd|run|yes"'])
    const after = await execute({ code: read })
    expect(textsOf(after, 'result')).toEqual(['[1] "from-envd|sandbox-value|unset"'])
  }, 30_000)

  it('starts in the cwd given at context creation, and refuses one that does not exist', async () => {
    const created = await post('/contexts', { language: 'r', cwd: '/tmp' })
    expect(created.status).toBe(200)
    const { id } = (await created.json()) as { id: string }
    const lines = await execute({ code: 'getwd()', language: undefined, context_id: id })
    expect(textsOf(lines, 'result')).toEqual(['[1] "/tmp"'])
    await fetch(`${base}/contexts/${id}`, { method: 'DELETE' })
    expect(textsOf(await execute({ code: 'getwd()' }), 'result')).toEqual([`[1] "${HOME}"`])
    const missing = await post('/contexts', { language: 'r', cwd: '/no/such/dir' })
    expect(missing.status).toBe(500)
    expect(await missing.text()).toBe('Failed to set working directory')
  }, 30_000)

  it('interrupts Sys.sleep when the client goes away; the session and its state live on', async () => {
    await execute({ code: 'survivor <- "still here"' })
    const abort = new AbortController()
    await startRun({ code: 'cat("sleeping\\n"); Sys.sleep(300)' }, 'sleeping', abort.signal)
    abort.abort()
    const started = Date.now()
    const next = await execute({ code: 'survivor' })
    expect(textsOf(next, 'result')).toEqual(['[1] "still here"'])
    expect(Date.now() - started).toBeLessThan(5000)
  }, 30_000)

  it('interrupts a program the cell started, which ends with it', async () => {
    const abort = new AbortController()
    await startRun({ code: 'cat("waiting\\n"); system("sleep 300")' }, 'waiting', abort.signal)
    abort.abort()
    const started = Date.now()
    expect(textsOf(await execute({ code: '"next"' }), 'result')).toEqual(['[1] "next"'])
    expect(Date.now() - started).toBeLessThan(5000)
  }, 30_000)

  it('interrupts until the cell ends, so a program started after the first interrupt ends too', async () => {
    // R takes an interrupt that lands just before system() starts its program, and then waits
    // for that program as if none had come. Here the cell takes the first one on purpose.
    const abort = new AbortController()
    const code =
      'tryCatch({ cat("waiting\\n"); Sys.sleep(300) }, interrupt = function(e) NULL)\nsystem("sleep 300")'
    await startRun({ code }, 'waiting', abort.signal)
    abort.abort()
    const started = Date.now()
    expect(textsOf(await execute({ code: '"next"' }), 'result')).toEqual(['[1] "next"'])
    expect(Date.now() - started).toBeLessThan(5000)
  }, 30_000)
})
