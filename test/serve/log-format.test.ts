import { execFile, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { Sandbox } from 'e2b'
import * as pty from 'node-pty'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  startTestAgent,
  TEMPLATE_CACHE,
  TEST_ADDRESS_POOL,
  testPrefix,
} from '../agent/agent-fixture.js'
import { type ClientEnv, freePort, parseClientEnv } from '../support/serve-process.js'

/**
 * How `sandbar serve` writes its log where a person reads it (a terminal) and where a machine
 * does (a pipe). serve-fixture.ts pipes both streams into one; these tests need a terminal, and
 * stderr alone, so they start their own.
 */

/** A `sandbar serve` on a terminal or on pipes. */
interface LoggingServe {
  client: ClientEnv
  apiPort: number
  /** On a terminal, everything it wrote; on pipes, stderr alone. */
  log(): string
  /** Stops it with SIGTERM, removes what its sandboxes left, and reports host leaks. */
  stop(): Promise<string[]>
}

/** One of the service's processes, whichever way it was started. */
interface ServeChild {
  exited: Promise<number>
  running(): boolean
  kill(signal: string): void
}

let buildDir: string

beforeAll(async () => {
  buildDir = await mkdtemp('/tmp/sbt-serve-build-')
  await promisify(execFile)(process.execPath, ['scripts/build.mjs', buildDir])
})

afterAll(async () => {
  await rm(buildDir, { recursive: true, force: true })
})

async function startLoggingServe(on: 'terminal' | 'pipes'): Promise<LoggingServe> {
  const dataDir = await mkdtemp('/tmp/sbt-serve-data-')
  const prefix = testPrefix()
  const [apiPort, proxyPort] = [await freePort(), await freePort()]
  const args = [
    path.join(buildDir, 'sandbar.mjs'),
    'serve',
    ...['--data-dir', dataDir, '--templates-dir', TEMPLATE_CACHE, '--prefix', prefix],
    '--keep-unused-layers',
    ...['--api-port', String(apiPort), '--proxy-port', String(proxyPort), '--no-masquerade'],
    '--no-code-interpreter',
    ...['--address-pool', TEST_ADDRESS_POOL],
  ]
  const { NO_COLOR: _noColor, ...inherited } = process.env
  const env = { ...inherited, SANDBAR_LOG_LEVEL: 'info', TERM: 'xterm-256color' }
  let log = ''
  let child: ServeChild
  if (on === 'terminal') {
    const terminal = pty.spawn(process.execPath, args, { cols: 200, rows: 50, env })
    let running = true
    terminal.onData((data) => {
      log += data
    })
    child = {
      exited: new Promise((resolve) =>
        terminal.onExit(({ exitCode }) => {
          running = false
          resolve(exitCode)
        }),
      ),
      running: () => running,
      kill: (signal) => terminal.kill(signal),
    }
  } else {
    const piped = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env })
    piped.stderr.on('data', (chunk: Buffer) => {
      log += chunk.toString()
    })
    child = {
      exited: new Promise((resolve) => piped.once('exit', (code) => resolve(code ?? -1))),
      running: () => piped.exitCode === null && piped.signalCode === null,
      kill: (signal) => piped.kill(signal as NodeJS.Signals),
    }
  }
  const stop = async (): Promise<string[]> => {
    if (child.running()) child.kill('SIGTERM')
    const exitCode = await child.exited
    const agent = await startTestAgent({ dataDir, prefix, envdBuildDir: buildDir })
    const leaks = await agent.dispose()
    if (exitCode !== 0) leaks.push(`sandbar serve exited ${exitCode}:\n${log}`)
    return leaks
  }
  try {
    await waitForHealth(child, apiPort, () => log)
    const clientEnvText = await readFile(path.join(dataDir, 'client.env'), 'utf8')
    const client = parseClientEnv(clientEnvText, { api: apiPort, proxy: proxyPort })
    return { client, apiPort, log: () => log, stop }
  } catch (error) {
    await stop().catch(() => undefined)
    throw error
  }
}

async function waitForHealth(child: ServeChild, apiPort: number, log: () => string) {
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    if (!child.running()) throw new Error(`sandbar serve exited early:\n${log()}`)
    const answer = await fetch(`http://127.0.0.1:${apiPort}/health`).catch(() => null)
    if (answer?.status === 204) return
    await sleep(100)
  }
  throw new Error(`sandbar serve did not answer /health:\n${log()}`)
}

/** Waits until the log shows what `pattern` matches: the terminal's reader lags the writes. */
async function waitForLog(pattern: RegExp, read: () => string): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!pattern.test(read()) && Date.now() < deadline) await sleep(50)
  expect(read()).toMatch(pattern)
}

/** A sandbox created, paused, resumed and killed through the SDK, for the log to tell. */
async function sandboxLifecycle(client: ClientEnv): Promise<string> {
  const sandbox = await Sandbox.create({ ...client, metadata: { purpose: 'sbt-log-format' } })
  await sandbox.pause()
  const resumed = await Sandbox.connect(sandbox.sandboxId, client)
  await resumed.kill()
  return sandbox.sandboxId
}

const DURATION = String.raw`(\d+ ms|\d+\.\d s|\d+ min \d+ s)`
const TIME = String.raw`\d\d:\d\d:\d\d`
/** An ANSI escape sequence's first character. */
const ESC = '\u001b'

describe('sandbar serve on a terminal', () => {
  let serve: LoggingServe

  beforeAll(async () => {
    serve = await startLoggingServe('terminal')
  })

  afterAll(async () => {
    expect(await serve?.stop()).toEqual([])
  })

  it("tells a person the start-up steps and a sandbox's create, pause, resume and kill, timed", async () => {
    const sandboxID = await sandboxLifecycle(serve.client)
    const short = `${sandboxID.slice(0, 8)}…`
    // The terminal ends lines with CR LF; colours wrap the time and any level.
    const lines = () =>
      serve
        .log()
        .replaceAll('\r', '')
        .replaceAll(new RegExp(`${ESC}\\[\\d+m`, 'g'), '')
    const killed = new RegExp(`^${TIME}  sandbox ${short} killed in ${DURATION}$`, 'm')
    await waitForLog(killed, lines)

    expect(lines()).toMatch(new RegExp(`^${TIME}  base template ready in ${DURATION}$`, 'm'))
    expect(lines()).toMatch(
      new RegExp(`^${TIME}  api listening on 127\\.0\\.0\\.1:${serve.apiPort}$`, 'm'),
    )
    expect(lines()).toMatch(new RegExp(`^${TIME}  sandbar ready in ${DURATION}$`, 'm'))
    for (const done of ['created from base', 'paused', 'resumed']) {
      expect(lines()).toMatch(new RegExp(`^${TIME}  sandbox ${short} ${done} in ${DURATION}$`, 'm'))
    }
    // The start-up steps come before the banner on stdout, in the order they happened.
    expect(lines().indexOf('  sandbar ready in ')).toBeLessThan(
      lines().indexOf('Sandbar is serving the E2B API'),
    )
    // No JSON reaches the person, and the time is dimmed as on other terminal tools.
    expect(lines()).not.toMatch(/^\{/m)
    expect(serve.log()).toMatch(new RegExp(`${ESC}\\[2m${TIME}${ESC}\\[22m`))
  })
})

describe('sandbar serve on pipes', () => {
  let serve: LoggingServe

  beforeAll(async () => {
    serve = await startLoggingServe('pipes')
  })

  afterAll(async () => {
    expect(await serve?.stop()).toEqual([])
  })

  it('writes JSON lines a machine parses, carrying each sandbox and its durations', async () => {
    const sandboxID = await sandboxLifecycle(serve.client)
    const log = () => serve.log()
    await waitForLog(/"msg":"sandbox killed"/, log)

    const entries = log()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line))
    const event = (msg: string) =>
      entries.find((entry) => entry.msg === msg && entry.sandboxID === sandboxID)
    expect(event('sandbox created')).toMatchObject({
      level: 30,
      templateID: 'base',
      durationMs: expect.any(Number),
    })
    for (const msg of ['sandbox paused', 'sandbox resumed', 'sandbox killed']) {
      expect(event(msg)).toMatchObject({ level: 30, durationMs: expect.any(Number) })
    }
    expect(entries.find((entry) => entry.msg === 'base template ready')).toMatchObject({
      durationMs: expect.any(Number),
    })
    expect(entries.find((entry) => entry.msg === 'api listening')).toMatchObject({
      host: '127.0.0.1',
      port: serve.apiPort,
    })
  })
})
