import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
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

const pythonDir =
  process.env.SANDBAR_TEST_PYTHON_KERNEL_DIR ?? path.resolve('src/interpreter/python')
const pythonMissing = (() => {
  if (!existsSync(path.join(pythonDir, 'sandbar_kernel.py')))
    return `no ${pythonDir}/sandbar_kernel.py`
  try {
    execFileSync('python3', ['-c', 'import IPython'], { stdio: 'ignore' })
    return undefined
  } catch {
    return 'python3 cannot import IPython'
  }
})()

/** The workers from source, as the bundle would run them (`<bundle> worker <language>`). */
function workerCommand(language: string): WorkerCommand | undefined {
  if (language === 'python' && pythonMissing === undefined) {
    return { command: 'python3', args: ['-u', path.join(pythonDir, 'sandbar_kernel.py')] }
  }
  if (!['javascript', 'typescript', 'bash'].includes(language)) return undefined
  const args = ['--import', 'tsx', 'src/interpreter/main.ts', 'worker', language]
  return { command: process.execPath, args }
}

const KEEPALIVE_MS = 400
// The contract's /home/user, which this machine may lack.
const HOME = mkdtempSync(path.join(tmpdir(), 'sandbar-interpreter-home-'))
const ACCESS_TOKEN = 'test-access-token'
let interpreter: Interpreter
let base: string
let envd: Server
const envdRequests: (string | undefined)[] = []

beforeAll(async () => {
  // envd's `/envs` stand-in: sandbox-level vars, answered only with the right token.
  envd = createServer((req, res) => {
    envdRequests.push(req.headers['x-access-token'] as string | undefined)
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
    keepaliveMs: KEEPALIVE_MS,
    workerCommand,
    defaultCwd: HOME,
    defaultLanguages: pythonMissing === undefined ? ['python', 'javascript'] : ['javascript'],
    logger: pino({ level: 'silent' }),
  })
  base = `http://127.0.0.1:${interpreter.port}`
}, 60_000)

afterAll(async () => {
  await interpreter?.close()
  envd?.close()
  rmSync(HOME, { recursive: true, force: true })
})

type Line = Record<string, unknown> & { type: string }

async function execute(body: object, init: RequestInit = {}): Promise<Line[]> {
  const response = await fetch(`${base}/execute`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Access-Token': ACCESS_TOKEN },
    body: JSON.stringify(body),
    ...init,
  })
  expect(response.status).toBe(200)
  const text = await response.text()
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Line)
}

const withoutKeepalives = (lines: Line[]) => lines.filter((line) => line.type !== 'keepalive')
const stdoutOf = (lines: Line[]) =>
  lines
    .filter((line) => line.type === 'stdout')
    .map((line) => line.text)
    .join('')
const mainResult = (lines: Line[]) => lines.find((line) => line.type === 'result')

async function post(route: string, body?: object): Promise<Response> {
  return fetch(`${base}${route}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
}

describe('interpreter server', { timeout: 60_000 }, () => {
  it('answers /health with "OK" once the default contexts exist', async () => {
    const response = await fetch(`${base}/health`)
    expect(response.status).toBe(200)
    expect(await response.json()).toBe('OK')
    const contexts = (await (await fetch(`${base}/contexts`)).json()) as { language: string }[]
    expect(contexts.map((context) => context.language)).toContain('javascript')
  })

  it('streams a javascript run: count, stdout with timestamp, unquoted result, end', async () => {
    const lines = await execute({ code: 'console.log("hello")\nprocess.cwd()', language: 'js' })
    const events = withoutKeepalives(lines)
    expect(events[0]).toEqual({ type: 'number_of_executions', execution_count: expect.any(Number) })
    expect(events[1]).toMatchObject({ type: 'stdout', text: 'hello\n' })
    expect(Number.isNaN(Date.parse(String(events[1]?.timestamp)))).toBe(false)
    expect(events[2]).toEqual({
      type: 'result',
      text: HOME,
      extra: {},
      is_main_result: true,
    })
    expect(events.at(-1)).toEqual({ type: 'end_of_execution' })
  })

  it('keeps javascript state, top-level await and ESM imports of node built-ins', async () => {
    await execute({ code: 'const kept = 41', language: 'javascript' })
    const lines = await execute({
      code: "import { EOL } from 'node:os'\nawait new Promise((r) => setTimeout(r, 10))\nkept + EOL.length",
      language: 'javascript',
    })
    expect(mainResult(lines)).toMatchObject({ text: '42' })
  })

  it('runs typescript with its types stripped, in its own default context', async () => {
    const lines = await execute({ code: 'const n: number = 2\nn * 21', language: 'ts' })
    expect(mainResult(lines)).toMatchObject({ text: '42' })
    const contexts = (await (await fetch(`${base}/contexts`)).json()) as { language: string }[]
    expect(contexts.map((context) => context.language)).toContain('typescript')
  })

  it('reports a thrown error with name, value and traceback, then ends the stream', async () => {
    const lines = await execute({
      code: 'throw new TypeError("bad input")',
      language: 'javascript',
    })
    const error = lines.find((line) => line.type === 'error')
    expect(error).toMatchObject({ name: 'TypeError', value: 'bad input' })
    expect(String(error?.traceback)).toContain('TypeError: bad input')
    expect(lines.at(-1)).toEqual({ type: 'end_of_execution' })
  })

  it('runs bash with one stdout event per write and the exit status as error', async () => {
    const lines = await execute({
      code: 'echo one; sleep 0.2; echo two; echo oops >&2; false',
      language: 'bash',
    })
    const stdout = lines.filter((line) => line.type === 'stdout').map((line) => line.text)
    expect(stdout).toEqual(['one\n', 'two\n'])
    expect(lines.find((line) => line.type === 'stderr')).toMatchObject({ text: 'oops\n' })
    expect(lines.find((line) => line.type === 'error')).toEqual({
      type: 'error',
      name: 'ExitCode',
      value: '1',
      traceback: '',
    })
    expect(lines.at(-1)).toEqual({ type: 'end_of_execution' })
  })

  it('makes workers, not the server, what the kernel ends first when memory runs out', async () => {
    const lines = await execute({ code: 'cat /proc/self/oom_score_adj', language: 'bash' })
    expect(lines.find((line) => line.type === 'stdout')).toMatchObject({ text: '500\n' })
  })

  it('starts bash in the cwd given at context creation', async () => {
    const response = await post('/contexts', { language: 'bash', cwd: '/tmp' })
    expect(response.status).toBe(200)
    const context = (await response.json()) as { id: string; language: string; cwd: string }
    expect(context).toMatchObject({ language: 'bash', cwd: '/tmp' })
    expect(stdoutOf(await execute({ code: 'pwd', context_id: context.id }))).toBe('/tmp\n')
    await fetch(`${base}/contexts/${context.id}`, { method: 'DELETE' })
  })

  it('sends keepalives during silence', async () => {
    const lines = await execute({
      code: 'await new Promise((r) => setTimeout(r, 1100))',
      language: 'js',
    })
    expect(lines.filter((line) => line.type === 'keepalive').length).toBeGreaterThanOrEqual(2)
    expect(lines.at(-1)).toEqual({ type: 'end_of_execution' })
  })

  it('answers the contract error texts', async () => {
    const both = await post('/execute', { code: '1', language: 'js', context_id: 'x' })
    expect(both.status).toBe(400)
    expect(await both.text()).toBe('Only one of context_id or language can be provided')
    const unknown = await post('/execute', { code: '1', context_id: 'nope' })
    expect(unknown.status).toBe(404)
    expect(await unknown.text()).toBe('Context nope not found')
    expect((await post('/execute', { code: 1 })).status).toBe(422)
    const badLanguage = await post('/execute', { code: '1', language: 'cobol' })
    expect(badLanguage.status).toBe(500)
    expect(await badLanguage.text()).toBe('Failed to create context: No such kernel named cobol')
    const badCreate = await post('/contexts', { language: 'cobol' })
    expect(badCreate.status).toBe(500)
    expect(await badCreate.text()).toMatch(/^Failed to create context: /)
    const badCwd = await post('/contexts', { language: 'javascript', cwd: '/no/such/dir' })
    expect(badCwd.status).toBe(500)
    expect(await badCwd.text()).toBe('Failed to set working directory')
    const restart = await post('/contexts/nope/restart')
    expect(restart.status).toBe(404)
    expect(await restart.text()).toBe('Context nope not found')
    const remove = await fetch(`${base}/contexts/nope`, { method: 'DELETE' })
    expect(remove.status).toBe(404)
    expect(await remove.text()).toBe('Context nope not found')
  })

  it('lists contexts in creation order; restart keeps the id and drops state; delete removes', async () => {
    const first = (await (await post('/contexts', { language: 'javascript' })).json()) as {
      id: string
    }
    const second = (await (await post('/contexts', { language: 'js', cwd: '/tmp' })).json()) as {
      id: string
    }
    const listed = (await (await fetch(`${base}/contexts`)).json()) as { id: string; cwd: string }[]
    expect(listed.slice(-2)).toEqual([
      { id: first.id, language: 'javascript', cwd: HOME },
      { id: second.id, language: 'javascript', cwd: '/tmp' },
    ])
    await execute({ code: 'const y = 1', context_id: second.id })
    expect(
      mainResult(await execute({ code: 'process.cwd()', context_id: second.id })),
    ).toMatchObject({ text: '/tmp' })
    const restarted = await post(`/contexts/${second.id}/restart`)
    expect(restarted.status).toBe(200)
    expect(await restarted.json()).toBeNull()
    const after = await execute({ code: 'y', context_id: second.id })
    expect(after.find((line) => line.type === 'error')).toMatchObject({ name: 'ReferenceError' })
    for (const id of [first.id, second.id]) {
      const removed = await fetch(`${base}/contexts/${id}`, { method: 'DELETE' })
      expect(removed.status).toBe(200)
    }
    const remaining = (await (await fetch(`${base}/contexts`)).json()) as { id: string }[]
    expect(remaining.map((context) => context.id)).not.toContain(second.id)
  })

  it('runs one execution at a time per context; the others queue', async () => {
    const { id } = (await (await post('/contexts', { language: 'javascript' })).json()) as {
      id: string
    }
    const slow = execute({
      code: 'globalThis.order = ["slow-start"]; await new Promise((r) => setTimeout(r, 500)); order.push("slow-end")',
      context_id: id,
    })
    await new Promise((resolve) => setTimeout(resolve, 100))
    const fast = await execute({ code: 'order.push("fast"); order.join(",")', context_id: id })
    await slow
    expect(mainResult(fast)).toMatchObject({ text: 'slow-start,slow-end,fast' })
    await fetch(`${base}/contexts/${id}`, { method: 'DELETE' })
  })

  it('interrupts the run when the client goes away, so the next run answers', async () => {
    const { id } = (await (await post('/contexts', { language: 'javascript' })).json()) as {
      id: string
    }
    const abort = new AbortController()
    const response = await fetch(`${base}/execute`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: 'while (true) {}', context_id: id }),
      signal: abort.signal,
    })
    expect(response.status).toBe(200)
    // The loop is running once its execution count has arrived.
    const reader = response.body?.getReader()
    let received = ''
    while (!received.includes('number_of_executions')) {
      const chunk = await reader?.read()
      expect(chunk?.done).toBe(false)
      received += new TextDecoder().decode(chunk?.value)
    }
    abort.abort()
    const started = Date.now()
    const next = await execute({ code: '1 + 1', context_id: id })
    expect(mainResult(next)).toMatchObject({ text: '2' })
    expect(Date.now() - started).toBeLessThan(5000)
    await fetch(`${base}/contexts/${id}`, { method: 'DELETE' })
  })

  it('injects envd /envs with the client token; per-run vars last one run, then restore', async () => {
    const read = 'process.env.SANDBOX_LEVEL + "|" + process.env.SHARED + "|" + process.env.PER_RUN'
    const { id } = (await (await post('/contexts', { language: 'javascript' })).json()) as {
      id: string
    }
    const during = await execute({
      code: read,
      context_id: id,
      env_vars: { SHARED: 'run', PER_RUN: 'yes' },
    })
    expect(mainResult(during)).toMatchObject({ text: 'from-envd|run|yes' })
    const after = await execute({ code: read, context_id: id })
    expect(mainResult(after)).toMatchObject({ text: 'from-envd|sandbox-value|undefined' })
    expect(envdRequests).toContain(ACCESS_TOKEN)
    await fetch(`${base}/contexts/${id}`, { method: 'DELETE' })
  })

  it('interrupts a bash sleep when the client goes away; the shell starts over in its cwd', async () => {
    await execute({ code: 'cd /tmp', language: 'bash' })
    const abort = new AbortController()
    const response = await fetch(`${base}/execute`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: 'echo started; sleep 300', language: 'bash' }),
      signal: abort.signal,
    })
    const reader = response.body?.getReader()
    let received = ''
    while (!received.includes('started')) {
      const chunk = await reader?.read()
      expect(chunk?.done).toBe(false)
      received += new TextDecoder().decode(chunk?.value)
    }
    abort.abort()
    expect(stdoutOf(await execute({ code: 'pwd', language: 'bash' }))).toBe(`${HOME}\n`)
  })

  it('sets and restores per-run env vars in bash too', async () => {
    const during = await execute({
      code: 'echo "$PER_RUN|$SHARED"',
      language: 'bash',
      env_vars: { PER_RUN: "it's" },
    })
    expect(stdoutOf(during)).toBe("it's|sandbox-value\n")
    // `$` + `{…}` apart: a bash parameter expansion, not a JavaScript placeholder.
    const code = ['echo "$', '{PER_RUN-unset}|$SHARED"'].join('')
    const after = await execute({ code, language: 'bash' })
    expect(stdoutOf(after)).toBe('unset|sandbox-value\n')
  })

  it('starts a javascript worker again after it dies, keeping the context', async () => {
    const { id } = (await (await post('/contexts', { language: 'javascript' })).json()) as {
      id: string
    }
    const killed = await execute({ code: 'process.kill(process.pid, "SIGKILL")', context_id: id })
    expect(killed.find((line) => line.type === 'error')).toMatchObject({
      name: 'ContextRestarting',
      value: 'Context was restarted',
    })
    expect(mainResult(await execute({ code: '6 * 7', context_id: id }))).toMatchObject({
      text: '42',
    })
    await fetch(`${base}/contexts/${id}`, { method: 'DELETE' })
  })

  describe.skipIf(pythonMissing !== undefined)(`python (${pythonMissing ?? 'available'})`, () => {
    it('runs python by default and shares the default context with language python', async () => {
      await execute({ code: 'x = 1' })
      const lines = await execute({ code: 'x', language: 'python' })
      expect(mainResult(lines)).toMatchObject({ text: '1' })
    })

    it('sets python env vars for one run, from envd and per run', async () => {
      const read =
        'import os\nos.environ.get("SANDBOX_LEVEL", "") + "|" + os.environ.get("PER_RUN", "unset")'
      const during = await execute({ code: read, env_vars: { PER_RUN: 'yes' } })
      expect(mainResult(during)).toMatchObject({ text: 'from-envd|yes' })
      expect(mainResult(await execute({ code: read }))).toMatchObject({ text: 'from-envd|unset' })
    })

    it('interrupts time.sleep when the client goes away', async () => {
      const abort = new AbortController()
      const response = await fetch(`${base}/execute`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ code: 'import time\ntime.sleep(300)' }),
        signal: abort.signal,
      })
      const reader = response.body?.getReader()
      let received = ''
      while (!received.includes('number_of_executions')) {
        const chunk = await reader?.read()
        expect(chunk?.done).toBe(false)
        received += new TextDecoder().decode(chunk?.value)
      }
      abort.abort()
      expect(mainResult(await execute({ code: '1 + 1' }))).toMatchObject({ text: '2' })
    })
  })
})
