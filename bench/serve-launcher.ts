import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import {
  type ClientEnv,
  freePort,
  parseClientEnv,
  waitForServeHealth,
} from '../test/support/serve-process.js'
import { type BenchAgentOptions, benchPrefix, startBenchAgent } from './bench-agent.js'

/** How the SDK reaches the service: its URLs and client.env's key and domain. */
export type BenchClient = ClientEnv

/** A `sandbar serve` a bench started, and how to remove it with everything it made. */
export interface BenchServe {
  client: BenchClient
  stop(): Promise<void>
}

/**
 * Starts the built `sandbar serve` from `envdBuildDir` on free loopback ports with a prefix of
 * its own, the cached templates and no masquerade; with `codeInterpreter`, code-interpreter-v1
 * and its default warm pool. `stop` SIGTERMs it by PID, then an agent on
 * its prefix and data directory adopts and removes the sandboxes it left (they outlive the
 * service by design), as the serve test fixture does.
 */
export async function startBenchServe(
  options: Omit<BenchAgentOptions, 'dataDir'>,
  maxSandboxes: number,
  { codeInterpreter = false } = {},
): Promise<BenchServe> {
  const dataDir = await mkdtemp('/tmp/sbt-bench-serve-')
  const [apiPort, proxyPort] = [await freePort(), await freePort()]
  const prefix = benchPrefix()
  const child = spawn(
    process.execPath,
    [
      path.join(options.envdBuildDir, 'sandbar.mjs'),
      'serve',
      ...['--data-dir', dataDir, '--templates-dir', options.templatesDir, '--prefix', prefix],
      '--keep-unused-layers',
      ...['--api-port', String(apiPort), '--proxy-port', String(proxyPort), '--no-masquerade'],
      ...['--max-sandboxes', String(maxSandboxes)],
      // code-interpreter-v1's first build installs Debian's packages: only its build sandboxes
      // reach the archive.
      ...(codeInterpreter ? ['--masquerade-builds'] : ['--no-code-interpreter']),
    ],
    { stdio: 'ignore', env: { ...process.env, SANDBAR_LOG_LEVEL: 'warn' } },
  )
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await exited
    }
    const adopter = await startBenchAgent({ ...options, dataDir }, prefix)
    await adopter.dispose()
    await rm(dataDir, { recursive: true, force: true })
  }
  try {
    await waitForServeHealth(child, apiPort)
    const text = await readFile(`${dataDir}/client.env`, 'utf8')
    return { client: parseClientEnv(text, { api: apiPort, proxy: proxyPort }), stop }
  } catch (error) {
    await stop()
    throw error
  }
}
