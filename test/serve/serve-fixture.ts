import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import {
  startTestAgent,
  TEMPLATE_CACHE,
  TEST_ADDRESS_POOL,
  testPrefix,
} from '../agent/agent-fixture.js'
import {
  adoptedSandboxID,
  type ClientEnv,
  freePort,
  parseClientEnv,
  pooledSandboxID,
  waitForServeHealth,
} from '../support/serve-process.js'

export type { ClientEnv }

/** A `sandbar serve` the test started from a fresh build. */
export interface ServeInstance {
  client: ClientEnv
  /** The client.env file as written. */
  clientEnvText: string
  /** The service's data directory. */
  dataDir: string
  /** The prefix of the service's host objects (host-names.ts). */
  prefix: string
  /** What it runs: node's arguments, the bundle and its `serve` flags. */
  args: string[]
  /** The PID of the running `sandbar serve`. */
  pid(): number
  /** Everything the running `sandbar serve` printed so far. */
  output(): string
  /** Stops the service by PID, removes every sandbox it left, and reports host leaks. */
  stop(): Promise<string[]>
  /**
   * SIGKILLs the service (no shutdown at all) and starts it again on the same data;
   * `whileDown` runs in between, as an operator would change files of a stopped install.
   */
  crashAndRestart(whileDown?: () => Promise<void>): Promise<void>
  /** As crashAndRestart, with SIGTERM: the service's own shutdown runs. */
  restart(whileDown?: () => Promise<void>): Promise<void>
}

/** One `sandbar serve` process and everything it printed. */
interface ServeProcess {
  child: ChildProcess
  output: () => string
}

function spawnServe(args: string[]): ServeProcess {
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SANDBAR_LOG_LEVEL: 'info' },
  })
  let output = ''
  const append = (chunk: Buffer) => {
    output += chunk.toString()
  }
  child.stdout?.on('data', append)
  child.stderr?.on('data', append)
  return { child, output: () => output }
}

/**
 * Builds the bundle and starts `sandbar serve` on free loopback ports, with a prefix of its
 * own and the cached templates, so the base template is not rebuilt. `extraArgs` are more
 * `serve` flags, such as `--max-sandboxes`. The cache is shared by every test service, so
 * none removes layers it does not use (`--keep-unused-layers`) unless `templatesDir` gives it
 * a layer store of its own. `codeInterpreter` builds (or finds cached) code-interpreter-v1.
 */
export async function startServe(
  extraArgs: string[] = [],
  options: { templatesDir?: string; codeInterpreter?: boolean } = {},
): Promise<ServeInstance> {
  const buildDir = await mkdtemp('/tmp/sbt-serve-build-')
  const dataDir = await mkdtemp('/tmp/sbt-serve-data-')
  await promisify(execFile)(process.execPath, ['scripts/build.mjs', buildDir])
  const [apiPort, proxyPort] = [await freePort(), await freePort()]
  const prefix = testPrefix()
  const args = [
    path.join(buildDir, 'sandbar.mjs'),
    'serve',
    ...['--data-dir', dataDir, '--prefix', prefix],
    ...(options.templatesDir === undefined
      ? ['--templates-dir', TEMPLATE_CACHE, '--keep-unused-layers']
      : ['--templates-dir', options.templatesDir]),
    ...['--api-port', String(apiPort), '--proxy-port', String(proxyPort), '--no-masquerade'],
    // code-interpreter-v1's build installs Debian's packages; services that need it let their
    // build sandboxes reach the archive, the others skip it.
    ...(options.codeInterpreter ? ['--masquerade-builds'] : ['--no-code-interpreter']),
    // No base sandboxes started ahead unless a test asks (`--warm-pool base=N` in extraArgs):
    // every create is then a cold one, and nothing else competes with a test for the CPU.
    ...['--warm-pool', 'base=0'],
    ...['--address-pool', TEST_ADDRESS_POOL],
    ...extraArgs,
  ]
  // Serve listens once its system templates are built: code-interpreter-v1's first build
  // (Debian's Python packages) takes minutes on a cold cache.
  const healthTimeoutMs = options.codeInterpreter ? 600_000 : 120_000
  let serve = spawnServe(args)
  const stop = async (): Promise<string[]> => {
    const { child, output } = serve
    let exitCode: unknown = child.exitCode
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      ;[exitCode] = await exited
    }
    // The sandboxes outlive the service by design; an agent on the same prefix and data
    // directory adopts and removes them, and reports what is left.
    const agent = await startTestAgent({ dataDir, prefix, envdBuildDir: buildDir })
    try {
      const leaks = await agent.dispose()
      if (exitCode !== 0) leaks.push(`sandbar serve exited ${String(exitCode)}:\n${output()}`)
      return leaks
    } finally {
      await rm(buildDir, { recursive: true, force: true })
    }
  }
  const stopAndStart = async (
    signal: NodeJS.Signals,
    whileDown?: () => Promise<void>,
  ): Promise<void> => {
    const { child } = serve
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      child.kill(signal)
      await exited
    }
    await whileDown?.()
    serve = spawnServe(args)
    await waitForServeHealth(serve.child, apiPort, serve.output, healthTimeoutMs)
  }
  try {
    await waitForServeHealth(serve.child, apiPort, serve.output, healthTimeoutMs)
    const clientEnvText = await readFile(path.join(dataDir, 'client.env'), 'utf8')
    const output = () => serve.output()
    const pid = () => {
      if (serve.child.pid === undefined) throw new Error('sandbar serve has no PID')
      return serve.child.pid
    }
    return {
      client: parseClientEnv(clientEnvText, { api: apiPort, proxy: proxyPort }),
      clientEnvText,
      dataDir,
      prefix,
      args,
      pid,
      output,
      stop,
      crashAndRestart: (whileDown) => stopAndStart('SIGKILL', whileDown),
      restart: (whileDown) => stopAndStart('SIGTERM', whileDown),
    }
  } catch (error) {
    await stop().catch(() => undefined)
    throw error
  }
}

/** The sandboxes a service's warm pools started, from its JSON log lines. */
export function pooledSandboxIDs(output: string): string[] {
  return output.split('\n').flatMap((line) => pooledSandboxID(line) ?? [])
}

/** The sandboxes a restarted service's warm pools took back from the run before. */
export function adoptedSandboxIDs(output: string): string[] {
  return output.split('\n').flatMap((line) => adoptedSandboxID(line) ?? [])
}
