import { type Context, NotFoundError, type OutputMessage, Sandbox } from '@e2b/code-interpreter'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type ServeInstance, startServe } from './serve-fixture.js'

// `@e2b/code-interpreter` against `sandbar serve` (wave2-contracts §1): languages, streaming,
// contexts and env vars. One sandbox serves the file: each test that needs state of its own
// makes a context of its own, so the tests do not disturb each other.

let serve: ServeInstance
let sandbox: Sandbox
const opts = () => ({ ...serve.client })

/** The sandbox's env vars (`Sandbox.create({ envs })`), seen by every context (§1.8). */
const SANDBOX_ENVS = { SANDBAR_LEVEL: 'sandbox', SANDBAR_SHARED: 'from-create' }

beforeAll(async () => {
  serve = await startServe([], { codeInterpreter: true })
  sandbox = await Sandbox.create({ ...opts(), envs: SANDBOX_ENVS })
})

afterAll(async () => {
  try {
    if (sandbox !== undefined) await sandbox.kill()
  } finally {
    const leaks = await serve?.stop()
    expect(leaks).toEqual([])
  }
})

/** Contexts the running test made, removed after it. */
let made: Context[] = []

/**
 * A context of its own for a test's state (§1.7). Each is a process in the sandbox, whose
 * memory is bounded by the template (1024 MB): about fifteen at once are too many.
 */
async function freshContext(language?: string, cwd?: string): Promise<Context> {
  const context = await sandbox.createCodeContext({ language, cwd })
  made.push(context)
  return context
}

afterEach(async () => {
  const listed = new Set((await sandbox.listCodeContexts()).map((context) => context.id))
  for (const context of made) if (listed.has(context.id)) await sandbox.removeCodeContext(context)
  made = []
})

describe('languages (§1.8)', () => {
  it('runs python by default, sharing state with language: python', async () => {
    const execution = await sandbox.runCode('x = 1 + 1\nprint("hi")\nx')
    expect(execution.text).toBe('2')
    expect(execution.results).toHaveLength(1)
    expect(execution.results[0]?.isMainResult).toBe(true)
    expect(execution.logs).toEqual({ stdout: ['hi\n'], stderr: [] })
    expect(execution.error).toBeUndefined()
    // No language is the python default context, the same one `language: 'python'` names.
    expect((await sandbox.runCode('x * 21', { language: 'python' })).text).toBe('42')
  })

  it('runs javascript with ESM imports, top-level await and state between runs', async () => {
    const execution = await sandbox.runCode(
      [
        "import path from 'node:path'",
        "console.log('from js')",
        "const base = await Promise.resolve(path.basename('/srv/notes.txt'))",
        'base',
      ].join('\n'),
      { language: 'javascript' },
    )
    expect(execution.error).toBeUndefined()
    expect(execution.logs.stdout).toEqual(['from js\n'])
    expect(execution.text).toBe('notes.txt')
    expect((await sandbox.runCode('base.length * 2', { language: 'js' })).text).toBe('18')
    // Quotes around a string result are dropped (§1.5): the cwd reads as a path.
    expect((await sandbox.runCode('process.cwd()', { language: 'javascript' })).text).toBe(
      '/home/user',
    )
  })

  it('runs typescript: annotations, an ESM import of a node builtin, top-level await', async () => {
    const execution = await sandbox.runCode(
      [
        "import { platform } from 'node:os'",
        'interface Sized { size: number }',
        'const box: Sized = { size: await Promise.resolve(5) }',
        "const label: string = platform() + '-' + box.size",
        'label',
      ].join('\n'),
      { language: 'typescript' },
    )
    expect(execution.error).toBeUndefined()
    expect(execution.text).toBe('linux-5')
    expect((await sandbox.runCode('box.size + 1', { language: 'ts' })).text).toBe('6')
  })

  it('runs bash in /home/user, keeping shell variables between runs', async () => {
    const first = await sandbox.runCode('WORD=bash; echo "$((6 * 7))"; pwd', { language: 'bash' })
    expect(first.error).toBeUndefined()
    expect(first.logs.stdout.join('')).toBe('42\n/home/user\n')
    const second = await sandbox.runCode('echo "still $WORD"', { language: 'bash' })
    expect(second.logs.stdout.join('')).toBe('still bash\n')
  })

  it.each([
    { language: 'python', set: 'mine = "kept"', get: 'mine', missing: 'NameError' },
    { language: 'javascript', set: 'var mine = "kept"', get: 'mine', missing: 'ReferenceError' },
    {
      language: 'typescript',
      set: 'const mine: string = "kept"',
      get: 'mine',
      missing: 'ReferenceError',
    },
  ])(
    'runs $language in a context of its own (`context:`)',
    async ({ language, set, get, missing }) => {
      const context = await freshContext(language)
      expect(context).toEqual({ id: expect.any(String), language, cwd: '/home/user' })
      expect((await sandbox.runCode(set, { context })).error).toBeUndefined()
      expect((await sandbox.runCode(get, { context })).text).toBe('kept')
      // The language's default context is another one.
      expect((await sandbox.runCode(get, { language })).error?.name).toBe(missing)
    },
  )

  it('runs bash in a context of its own (`context:`)', async () => {
    const context = await freshContext('bash')
    expect(context).toEqual({ id: expect.any(String), language: 'bash', cwd: '/home/user' })
    await sandbox.runCode('MINE=kept', { context })
    const own = await sandbox.runCode(`echo "\${MINE:-unset}"`, { context })
    expect(own.logs.stdout.join('')).toBe('kept\n')
    const other = await sandbox.runCode(`echo "\${MINE:-unset}"`, { language: 'bash' })
    expect(other.logs.stdout.join('')).toBe('unset\n')
  })
})

describe('streaming (§1.4)', () => {
  it('calls onStdout and onStderr once per write, in order, as the code runs', async () => {
    const seen: { stream: string; line: string; timestamp: number; at: number }[] = []
    const record = (stream: string) => (message: OutputMessage) => {
      seen.push({ stream, line: message.line, timestamp: message.timestamp, at: Date.now() })
    }
    const execution = await sandbox.runCode(
      [
        'import sys, time',
        'print("one")',
        'time.sleep(0.8)',
        'print("two", file=sys.stderr)',
        'time.sleep(0.8)',
        'print("three")',
      ].join('\n'),
      { onStdout: record('stdout'), onStderr: record('stderr') },
    )
    const resolvedAt = Date.now()
    expect(seen.map(({ stream, line }) => [stream, line])).toEqual([
      ['stdout', 'one\n'],
      ['stderr', 'two\n'],
      ['stdout', 'three\n'],
    ])
    expect(execution.logs).toEqual({ stdout: ['one\n', 'three\n'], stderr: ['two\n'] })
    const [one, two, three] = seen
    if (one === undefined || two === undefined || three === undefined) throw new Error('missing')
    // The JS SDK stamps each message as it reads it; the wire's `timestamp` is for Python's.
    expect(one.timestamp).toBeLessThan(two.timestamp)
    expect(two.timestamp).toBeLessThan(three.timestamp)
    // Each arrived as it was written, not all together when the run ended.
    expect(two.at - one.at).toBeGreaterThanOrEqual(400)
    expect(three.at - two.at).toBeGreaterThanOrEqual(400)
    expect(three.at).toBeLessThanOrEqual(resolvedAt)
  })

  it('calls onResult for each display() and for the final expression', async () => {
    const results: { text: string | undefined; main: boolean; at: number }[] = []
    const execution = await sandbox.runCode(
      [
        'from IPython.display import display',
        'import time',
        'display("first")',
        "display({'second': 2})",
        'time.sleep(0.8)',
        '6 * 7',
      ].join('\n'),
      {
        onResult: (result) =>
          results.push({ text: result.text, main: result.isMainResult, at: Date.now() }),
      },
    )
    expect(results.map(({ text, main }) => ({ text, main }))).toEqual([
      { text: 'first', main: false },
      { text: "{'second': 2}", main: false },
      { text: '42', main: true },
    ])
    expect((results[2]?.at ?? 0) - (results[1]?.at ?? 0)).toBeGreaterThanOrEqual(400)
    expect(execution.results.map((result) => result.text)).toEqual(['first', "{'second': 2}", '42'])
    expect(execution.text).toBe('42')
  })

  it('calls onError with the exception, its value and a traceback that shows the line', async () => {
    const errors: { name: string; value: string; traceback: string }[] = []
    const execution = await sandbox.runCode(
      ['def ratio(a, b):', '    return a / b', '', 'print("before")', 'ratio(1, 0)'].join('\n'),
      { onError: (error) => errors.push({ ...error }) },
    )
    expect(errors).toHaveLength(1)
    const [error] = errors
    expect(error).toMatchObject({ name: 'ZeroDivisionError', value: 'division by zero' })
    expect(error?.traceback).toContain('ratio(1, 0)')
    expect(error?.traceback).toContain('return a / b')
    expect(error?.traceback).toContain('ZeroDivisionError')
    expect(execution.error).toEqual(error)
    expect(execution.logs.stdout).toEqual(['before\n'])
    expect(execution.results).toEqual([])
  })

  it('calls onError for a javascript exception', async () => {
    const errors: string[] = []
    const execution = await sandbox.runCode('const empty = null\nempty.field', {
      language: 'javascript',
      onError: (error) => errors.push(error.name),
    })
    expect(errors).toEqual(['TypeError'])
    expect(execution.error?.value).toContain('null')
  })

  it('counts executions per context, failed ones too, but not its own env-var helpers', async () => {
    const context = await freshContext('python')
    expect((await sandbox.runCode('1', { context })).executionCount).toBe(1)
    expect((await sandbox.runCode('1 / 0', { context })).executionCount).toBe(2)
    const withEnvs = await sandbox.runCode('3', { context, envs: { COUNTED: 'no' } })
    expect(withEnvs.executionCount).toBe(3)
    expect((await sandbox.runCode('4', { context })).executionCount).toBe(4)
  })
})

describe('contexts (§1.7)', () => {
  it('lists the default python and javascript contexts first, then new ones in order', async () => {
    const before = await sandbox.listCodeContexts()
    expect(before.slice(0, 2)).toEqual([
      { id: expect.any(String), language: 'python', cwd: '/home/user' },
      { id: expect.any(String), language: 'javascript', cwd: '/home/user' },
    ])
    const first = await freshContext()
    const second = await freshContext('javascript')
    expect(first).toEqual({ id: expect.any(String), language: 'python', cwd: '/home/user' })
    const after = await sandbox.listCodeContexts()
    expect(after).toEqual([...before, first, second])
  })

  it('creates contexts with a language and a cwd that their code runs in', async () => {
    const python = await freshContext('python', '/tmp')
    expect(python).toEqual({ id: expect.any(String), language: 'python', cwd: '/tmp' })
    expect((await sandbox.runCode('import os\nos.getcwd()', { context: python })).text).toBe('/tmp')
    const javascript = await freshContext('javascript', '/root')
    expect(javascript.cwd).toBe('/root')
    expect((await sandbox.runCode('process.cwd()', { context: javascript })).text).toBe('/root')
    const bash = await freshContext('bash', '/etc')
    const pwd = await sandbox.runCode('pwd', { context: bash })
    expect(pwd.logs.stdout.join('')).toBe('/etc\n')
  })

  it('restarts a context: its state is gone, its id and cwd are kept', async () => {
    const context = await freshContext('python', '/tmp')
    await sandbox.runCode('kept = 5', { context })
    await sandbox.restartCodeContext(context)
    const lost = await sandbox.runCode('kept', { context })
    expect(lost.error).toMatchObject({ name: 'NameError', value: "name 'kept' is not defined" })
    expect((await sandbox.runCode('import os\nos.getcwd()', { context })).text).toBe('/tmp')
    expect(await sandbox.listCodeContexts()).toContainEqual(context)
  })

  it('removes a context: it is no longer listed and running in it fails', async () => {
    const context = await freshContext('python')
    await sandbox.removeCodeContext(context)
    expect(await sandbox.listCodeContexts()).not.toContainEqual(context)
    const run = sandbox.runCode('1', { context })
    await expect(run).rejects.toBeInstanceOf(NotFoundError)
    await expect(run).rejects.toThrow(`Context ${context.id} not found`)
    await expect(sandbox.restartCodeContext(context)).rejects.toThrow(
      `Context ${context.id} not found`,
    )
  })

  it('runs one execution at a time per context, while other contexts run beside it', async () => {
    const [busy, other] = [await freshContext(), await freshContext()]
    // Each run reports when it started and ended, by the sandbox's clock.
    const code = 'import time\nstarted = time.time()\ntime.sleep(1)\n[started, time.time()]'
    const span = async (context: Context) => {
      const { json, text } = (await sandbox.runCode(code, { context })).results[0] ?? {}
      if (!Array.isArray(json)) throw new Error(`no (start, end) pair: ${text}`)
      return { start: Number(json[0]), end: Number(json[1]) }
    }
    const [first, second, beside] = await Promise.all([span(busy), span(busy), span(other)])
    const [earlier, later] = [first, second].sort((a, b) => a.start - b.start)
    if (earlier === undefined || later === undefined) throw new Error('missing')
    // The same context: one after the other.
    expect(later.start).toBeGreaterThanOrEqual(earlier.end)
    // Another context: at the same time as the first.
    expect(beside.start).toBeLessThan(earlier.end)
    expect(beside.end).toBeGreaterThan(earlier.start)
  })
})

describe('env vars (§1.8)', () => {
  it('gives every language the env vars of Sandbox.create', async () => {
    const python = await sandbox.runCode('import os\nos.environ["SANDBAR_LEVEL"]')
    expect(python.text).toBe('sandbox')
    const javascript = await sandbox.runCode('process.env.SANDBAR_LEVEL', {
      language: 'javascript',
    })
    expect(javascript.text).toBe('sandbox')
    const typescript = await sandbox.runCode(
      'const level: string = process.env.SANDBAR_LEVEL ?? ""\nlevel',
      {
        language: 'typescript',
      },
    )
    expect(typescript.text).toBe('sandbox')
    const bash = await sandbox.runCode('echo "$SANDBAR_LEVEL"', { language: 'bash' })
    expect(bash.logs.stdout.join('')).toBe('sandbox\n')
    // A context made later gets them too.
    const context = await freshContext('python')
    const later = await sandbox.runCode('import os\nos.environ["SANDBAR_LEVEL"]', { context })
    expect(later.text).toBe('sandbox')
  })

  it.each([
    {
      language: 'python',
      code: 'import os\nprint(os.environ.get("SANDBAR_RUN", "unset"), os.environ.get("SANDBAR_SHARED", "unset"))',
    },
    {
      language: 'javascript',
      code: 'console.log(process.env.SANDBAR_RUN ?? "unset", process.env.SANDBAR_SHARED ?? "unset")',
    },
    { language: 'bash', code: `echo "\${SANDBAR_RUN:-unset} \${SANDBAR_SHARED:-unset}"` },
  ])(
    'gives $language per-run envs for that run only, then restores the sandbox value',
    async ({ language, code }) => {
      const context = await freshContext(language)
      const envs = { SANDBAR_RUN: 'run-only', SANDBAR_SHARED: 'per-run' }
      const during = await sandbox.runCode(code, { context, envs })
      expect(during.error).toBeUndefined()
      expect(during.logs.stdout.join('')).toBe('run-only per-run\n')
      const after = await sandbox.runCode(code, { context })
      expect(after.logs.stdout.join('')).toBe('unset from-create\n')
    },
  )
})
