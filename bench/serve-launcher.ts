import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { createInterface } from 'node:readline'
import {
  type ClientEnv,
  freePort,
  loggedHibernation,
  loggedSnapshot,
  parseClientEnv,
  pooledSandboxID,
  waitForServeHealth,
} from '../test/support/serve-process.js'
import {
  type BenchAgentOptions,
  benchAddressPool,
  benchPrefix,
  startBenchAgent,
} from './bench-agent.js'
import { cleanupOnInterrupt } from './interrupt.js'

/** How the SDK reaches the service: its URLs and client.env's key and domain. */
export type BenchClient = ClientEnv

/** A `sandbar serve` a bench started, and how to remove it with everything it made. */
export interface BenchServe {
  client: BenchClient
  /** The host prefix its sandboxes' names, cgroups and tables carry. */
  prefix: string
  /** Every sandbox its warm pools have started so far, from its log. */
  pooled: ReadonlySet<string>
  /** Sandboxes it hibernated so far, with how long that took and their images' size. */
  hibernations: ReadonlyMap<string, { durationMs: number; imageBytes: number }>
  /** Sandboxes snapshotted so far (the last snapshot of each), how long they stood frozen. */
  snapshots: ReadonlyMap<string, { frozenMs: number; imageBytes: number }>
  stop(): Promise<void>
}

export interface BenchServeOptions {
  /** Build and serve code-interpreter-v1, with its default warm pool. */
  codeInterpreter?: boolean
  /** More `serve` flags, such as `--warm-pool base=0` for cold creates. */
  extraArgs?: string[]
}

/**
 * Starts the built `sandbar serve` from `envdBuildDir` on free loopback ports with a prefix and
 * an address pool of its own, the cached templates and no masquerade, logging JSON to a pipe
 * the launcher reads. `stop` SIGTERMs it by PID, then an agent on its prefix and data
 * directory adopts and removes the sandboxes it left (they outlive the service by design), as
 * the serve test fixture does.
 */
export async function startBenchServe(
  options: Omit<BenchAgentOptions, 'dataDir'>,
  maxSandboxes: number,
  { codeInterpreter = false, extraArgs = [] }: BenchServeOptions = {},
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
      ...['--max-sandboxes', String(maxSandboxes), '--address-pool', benchAddressPool],
      // code-interpreter-v1's first build installs Debian's packages: only its build sandboxes
      // reach the archive.
      ...(codeInterpreter ? ['--masquerade-builds'] : ['--no-code-interpreter']),
      ...['--log-format', 'json'],
      ...extraArgs,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SANDBAR_LOG_LEVEL: 'info' } },
  )
  const pooled = new Set<string>()
  const hibernations = new Map<string, { durationMs: number; imageBytes: number }>()
  const snapshots = new Map<string, { frozenMs: number; imageBytes: number }>()
  const problems: string[] = []
  createInterface({ input: child.stderr }).on('line', (line) => {
    const sandboxID = pooledSandboxID(line)
    if (sandboxID !== undefined) pooled.add(sandboxID)
    const hibernation = loggedHibernation(line)
    if (hibernation !== undefined) hibernations.set(hibernation.sandboxID, hibernation)
    const snapshot = loggedSnapshot(line)
    if (snapshot !== undefined) snapshots.set(snapshot.sandboxID, snapshot)
    if (isProblem(line)) problems.push(line)
  })
  const removeAll = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await exited
    }
    // A failed request answers the SDK with no cause; the service's log has it.
    for (const line of problems) console.error(`sandbar serve: ${line}`)
    const adopter = await startBenchAgent({ ...options, dataDir }, prefix)
    await adopter.dispose()
    await rm(dataDir, { recursive: true, force: true })
  }
  const stop = cleanupOnInterrupt(removeAll)
  try {
    await waitForServeHealth(child, apiPort)
    const text = await readFile(`${dataDir}/client.env`, 'utf8')
    const client = parseClientEnv(text, { api: apiPort, proxy: proxyPort })
    return { client, prefix, pooled, hibernations, snapshots, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** A JSON log line at pino's error level or above, or a line that is not JSON at all. */
function isProblem(line: string): boolean {
  try {
    const { level } = JSON.parse(line) as { level?: unknown }
    return typeof level === 'number' && level >= 50
  } catch {
    return true
  }
}
