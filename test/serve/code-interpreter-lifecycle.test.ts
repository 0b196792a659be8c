import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { Sandbox, Template, TimeoutError } from '@e2b/code-interpreter'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi } from '../support/serve-process.js'
import { pooledSandboxIDs, type ServeInstance, startServe } from './serve-fixture.js'

// The code interpreter's sandbox around the code (wave2-contracts §1): the warm pool, client
// timeouts and interrupts, a sandbox killed mid-run, the server and its workers killed with
// SIGKILL, secure sandboxes with private traffic, and templates built from
// code-interpreter-v1, all through `@e2b/code-interpreter` against `sandbar serve`.

let serve: ServeInstance
const opts = () => ({ ...serve.client })

/** Two pooled sandboxes, so that the warm-pool test's two creates both take one. */
const POOL_SIZE = 2

beforeAll(async () => {
  serve = await startServe(['--warm-pool', `code-interpreter-v1=${POOL_SIZE}`], {
    codeInterpreter: true,
  })
})

afterAll(async () => {
  const leaks = await serve?.stop()
  expect(leaks).toEqual([])
})

/** Creates a sandbox for one test and kills it after, whatever happens. */
async function withSandbox(
  create: () => Promise<Sandbox>,
  use: (sandbox: Sandbox) => Promise<void>,
): Promise<void> {
  const sandbox = await create()
  try {
    await use(sandbox)
  } finally {
    await Sandbox.kill(sandbox.sandboxId, opts())
  }
}

/** Runs a command as root in the sandbox, as a user debugging it would. */
async function asRoot(sandbox: Sandbox, command: string): Promise<string> {
  return (await sandbox.commands.run(command, { user: 'root' })).stdout.trim()
}

/** `1 + 1` once the interpreter answers again, giving up 20 s after `since`. */
async function answerAgain(sandbox: Sandbox, since: number): Promise<string | undefined> {
  const deadline = since + 20_000
  for (;;) {
    try {
      const execution = await sandbox.runCode('1 + 1', {
        requestTimeoutMs: 3_000,
        timeoutMs: 5_000,
      })
      return execution.text
    } catch (error) {
      // Until the server is back, the proxy answers 502: the SDK's TimeoutError.
      if (Date.now() > deadline) throw error
      await sleep(200)
    }
  }
}

describe('the warm pool', () => {
  it('hands two creates two sandboxes, each with its own env vars and nothing of the other', async () => {
    await expect
      .poll(() => pooledSandboxIDs(serve.output()).length, { timeout: 60_000 })
      .toBe(POOL_SIZE)
    const pooled = pooledSandboxIDs(serve.output())
    await withSandbox(
      () => Sandbox.create({ ...opts(), envs: { SANDBAR_WHO: 'first' } }),
      (first) =>
        withSandbox(
          () => Sandbox.create({ ...opts(), envs: { SANDBAR_WHO: 'second' } }),
          async (second) => {
            expect(first.sandboxId).not.toBe(second.sandboxId)
            // Both were started before their create, with no env vars of their own.
            expect(pooled).toContain(first.sandboxId)
            expect(pooled).toContain(second.sandboxId)
            const who = 'import os\nos.environ.get("SANDBAR_WHO", "unset")'
            expect((await first.runCode(who)).text).toBe('first')
            expect((await second.runCode(who)).text).toBe('second')
            const whoInJs = await second.runCode('process.env.SANDBAR_WHO', { language: 'js' })
            expect(whoInJs.text).toBe('second')
            const write = 'kept = 41\nopen("/home/user/mine.txt", "w").write("first")'
            expect((await first.runCode(write)).error).toBeUndefined()
            expect((await second.runCode('kept')).error?.name).toBe('NameError')
            const exists = 'import os\nos.path.exists("/home/user/mine.txt")'
            expect((await second.runCode(exists)).text).toBe('False')
            expect((await first.runCode('kept + 1')).text).toBe('42')
          },
        ),
    )
  })
})

describe('timeouts and interrupts (§1.8)', () => {
  let sandbox: Sandbox

  beforeAll(async () => {
    sandbox = await Sandbox.create(opts())
  })

  afterAll(async () => {
    if (sandbox !== undefined) await sandbox.kill()
  })

  it.each([
    { language: 'python', code: 'import time; time.sleep(300)', next: '1 + 1' },
    { language: 'javascript', code: 'while (true) {}', next: '1 + 1' },
    { language: 'bash', code: 'sleep 300', next: 'echo $((1 + 1))' },
  ])(
    'gives up on $language after timeoutMs, and the next run answers at once',
    async ({ language, code, next }) => {
      // Python in the default context, as most users run it; the others in contexts of their own.
      const context =
        language === 'python' ? undefined : await sandbox.createCodeContext({ language })
      const run = context === undefined ? { timeoutMs: 2_000 } : { context, timeoutMs: 2_000 }
      const started = Date.now()
      const timedOut = sandbox.runCode(code, run)
      await expect(timedOut).rejects.toBeInstanceOf(TimeoutError)
      await expect(timedOut).rejects.toThrow(
        "Execution timed out — the 'timeoutMs' option can be used to increase this timeout",
      )
      expect(Date.now() - started).toBeLessThan(5_000)
      // The server saw the client go and interrupted the code.
      const resumed = Date.now()
      const answer = await sandbox.runCode(next, context === undefined ? {} : { context })
      expect(Date.now() - resumed).toBeLessThan(5_000)
      expect(answer.error).toBeUndefined()
      expect(answer.text ?? answer.logs.stdout.join('').trim()).toBe('2')
    },
  )
})

describe('a sandbox killed mid-run', () => {
  it("ends the run with the SDK's 'was killed' TimeoutError", async () => {
    const sandbox = await Sandbox.create(opts())
    let started: () => void = () => {}
    const running = new Promise<void>((resolve) => {
      started = resolve
    })
    const execution = sandbox.runCode('import time\nprint("started")\ntime.sleep(60)', {
      onStdout: () => started(),
    })
    const outcome = execution.then(
      () => undefined,
      (error: unknown) => error,
    )
    await running
    await sandbox.kill()
    const error = await outcome
    expect(error).toBeInstanceOf(TimeoutError)
    expect(String(error)).toContain(
      'The sandbox was killed while the request was in progress. This can happen when the sandbox times out or is killed manually.',
    )
  })
})

describe('resilience', () => {
  let sandbox: Sandbox

  beforeAll(async () => {
    sandbox = await Sandbox.create(opts())
  })

  afterAll(async () => {
    if (sandbox !== undefined) await sandbox.kill()
  })

  // The server's command line ends in interpreter.mjs; its restart loop's and workers' do not.
  const serverPid = () => asRoot(sandbox, "pgrep -fx '.*/interpreter/interpreter\\.mjs' || true")
  // `[s]` keeps the shell that runs pgrep out of the count.
  const pythonWorkers = () => asRoot(sandbox, "pgrep -c -f '[s]andbar_kernel.py' || true")

  it('answers again after its server is killed with SIGKILL', async () => {
    const before = await serverPid()
    expect(before).toMatch(/^\d+$/)
    await sandbox.runCode('before_the_kill = True')
    const killedAt = Date.now()
    await asRoot(sandbox, `kill -9 ${before}`)
    // answerAgain gives up 20 s after the kill: how fast is the bench's to say, not a test's.
    expect(await answerAgain(sandbox, killedAt)).toBe('2')
    const after = await serverPid()
    expect(after).toMatch(/^\d+$/)
    expect(after).not.toBe(before)
    // A new server: fresh default contexts, and the old server's workers are gone.
    const contexts = await sandbox.listCodeContexts()
    expect(contexts.map((context) => context.language)).toEqual(['python', 'javascript'])
    await expect.poll(pythonWorkers, { timeout: 10_000 }).toBe('1')
    expect((await sandbox.runCode('before_the_kill')).error?.name).toBe('NameError')
  })

  it('brings a context back after its python worker is killed with SIGKILL', async () => {
    const context = await sandbox.createCodeContext({ language: 'python', cwd: '/tmp' })
    const pid = (await sandbox.runCode('import os\nstate = 1\nos.getpid()', { context })).text
    expect(pid).toMatch(/^\d+$/)
    let started: () => void = () => {}
    const running = new Promise<void>((resolve) => {
      started = resolve
    })
    const execution = sandbox.runCode('import time\nprint("started")\ntime.sleep(30)', {
      context,
      onStdout: () => started(),
    })
    await running
    const killedAt = Date.now()
    await asRoot(sandbox, `kill -9 ${pid}`)
    // The run in flight ends with the contract's error (§1.4).
    expect((await execution).error).toEqual({
      name: 'ContextRestarting',
      value: 'Context was restarted',
      traceback: '',
    })
    const back = await sandbox.runCode('import os\n[os.getcwd(), os.getpid()]', { context })
    expect(Date.now() - killedAt).toBeLessThan(10_000)
    const [cwd, newPid] = (back.results[0]?.json ?? []) as unknown as [string, number]
    expect(cwd).toBe('/tmp')
    expect(String(newPid)).not.toBe(pid)
    expect((await sandbox.runCode('state', { context })).error?.name).toBe('NameError')
    expect(await sandbox.listCodeContexts()).toContainEqual(context)
    await sandbox.removeCodeContext(context)
  })
})

describe('secure sandboxes with private traffic (§1.1)', () => {
  it('run code and see their env vars through the traffic token; without it the port is shut', async () => {
    await withSandbox(
      () =>
        Sandbox.create({
          ...opts(),
          secure: true,
          network: { allowPublicTraffic: false },
          envs: { SANDBAR_PRIVATE: 'private' },
        }),
      async (sandbox) => {
        const token = sandbox.trafficAccessToken
        expect(token).toEqual(expect.any(String))
        const python = await sandbox.runCode('import os\nos.environ["SANDBAR_PRIVATE"]')
        expect(python.text).toBe('private')
        const js = await sandbox.runCode('process.env.SANDBAR_PRIVATE', { language: 'js' })
        expect(js.text).toBe('private')
        const context = await sandbox.createCodeContext({ language: 'python' })
        expect(await sandbox.listCodeContexts()).toContainEqual(context)
        const perRun = await sandbox.runCode('import os\nos.environ["SANDBAR_RUN"]', {
          context,
          envs: { SANDBAR_RUN: 'per-run' },
        })
        expect(perRun.text).toBe('per-run')
        const health = (headers: Record<string, string>) =>
          fetch(`${serve.client.sandboxUrl}/health`, {
            headers: {
              'E2b-Sandbox-Id': sandbox.sandboxId,
              'E2b-Sandbox-Port': '49999',
              ...headers,
            },
          })
        expect((await health({})).status).toBe(403)
        const allowed = await health({ 'E2B-Traffic-Access-Token': token ?? '' })
        expect(allowed.status).toBe(200)
        expect(await allowed.json()).toBe('OK')
      },
    )
  })
})

describe('templates built from code-interpreter-v1', () => {
  it('keep the interpreter running, with what the build added (Template().fromTemplate)', async () => {
    const name = `sbt-interp-jq-${randomBytes(3).toString('hex')}`
    const built = await Template.build(
      Template().fromTemplate('code-interpreter-v1').aptInstall(['jq']),
      name,
      { ...opts(), cpuCount: 2, memoryMB: 1024 },
    )
    try {
      await withSandbox(
        () => Sandbox.create(name, { ...opts(), envs: { SANDBAR_BUILT: 'extended' } }),
        async (sandbox) => {
          const version = await sandbox.runCode('!jq --version')
          expect(version.error).toBeUndefined()
          expect(version.logs.stdout.join('')).toMatch(/^jq-1\.\d+/)
          const viaSubprocess = await sandbox.runCode(
            [
              'import os, subprocess',
              "answer = subprocess.run(['jq', '-n', '6 * 7'], capture_output=True, text=True)",
              '[answer.stdout.strip(), os.environ["SANDBAR_BUILT"]]',
            ].join('\n'),
          )
          expect(viaSubprocess.results[0]?.json).toEqual(['42', 'extended'])
          // What code-interpreter-v1 has is still there.
          const pandas = await sandbox.runCode('import pandas as pd\npd.DataFrame({"a": [1]})')
          expect(pandas.results[0]?.data).toEqual({ a: [1] })
          const js = await sandbox.runCode('6 * 7', { language: 'javascript' })
          expect(js.text).toBe('42')
        },
      )
    } finally {
      await callApi(serve.client, 'DELETE', `/templates/${built.templateId}`)
    }
  })
})
