import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { type BenchAgentOptions, benchPrefix, startBenchAgent } from './bench-agent.js'

/** The client settings `<data>/client.env` holds, as the SDK's options take them. */
export interface BenchClient {
  apiUrl: string
  sandboxUrl: string
  apiKey: string
}

/** A `sandbar serve` a bench started, and how to remove it with everything it made. */
export interface BenchServe {
  client: BenchClient
  stop(): Promise<void>
}

async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  await new Promise((resolve) => server.close(resolve))
  if (address === null || typeof address === 'string') throw new Error('no TCP port')
  return address.port
}

async function waitForHealth(child: ChildProcess, apiPort: number): Promise<void> {
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`sandbar serve exited ${child.exitCode}`)
    const answer = await fetch(`http://127.0.0.1:${apiPort}/health`).catch(() => null)
    if (answer?.status === 204) return
    await sleep(100)
  }
  throw new Error('sandbar serve did not answer /health')
}

/**
 * Starts the built `sandbar serve` from `envdBuildDir` on free loopback ports with a prefix of
 * its own, the cached templates and no masquerade. `stop` SIGTERMs it by PID, then an agent on
 * its prefix and data directory adopts and removes the sandboxes it left (they outlive the
 * service by design), as the serve test fixture does.
 */
export async function startBenchServe(
  options: Omit<BenchAgentOptions, 'dataDir'>,
  maxSandboxes: number,
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
      ...['--api-port', String(apiPort), '--proxy-port', String(proxyPort), '--no-masquerade'],
      ...['--max-sandboxes', String(maxSandboxes)],
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
    await waitForHealth(child, apiPort)
    return { client: parseClientEnv(await readFile(`${dataDir}/client.env`, 'utf8')), stop }
  } catch (error) {
    await stop()
    throw error
  }
}

function parseClientEnv(text: string): BenchClient {
  const values = new Map(
    text
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  )
  const get = (name: string) => {
    const value = values.get(name)
    if (value === undefined) throw new Error(`client.env has no ${name}`)
    return value
  }
  return {
    apiUrl: get('E2B_API_URL'),
    sandboxUrl: get('E2B_SANDBOX_URL'),
    apiKey: get('E2B_API_KEY'),
  }
}
