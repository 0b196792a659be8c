import { once } from 'node:events'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { getRequestListener } from '@hono/node-server'
import { createAgent, RUNTIME_NAMES, type RuntimeName } from '../agent/index.js'
import { createControlPlane } from '../api/index.js'
import { createLogger } from '../logger.js'
import { createProxy } from '../proxy/index.js'
import { createStore, type Store } from '../store/index.js'

/** `sandbar serve` settings, from flags. */
export interface ServeConfig {
  dataDir: string
  templatesDir?: string
  host: string
  apiPort: number
  proxyPort: number
  domain: string
  prefix: string
  /** The OCI runtime new sandboxes run on; each sandbox records its own. */
  runtime: RuntimeName
  masquerade: boolean
  /** IPv4 pool that sandbox /30 networks come from; agents on one host need disjoint pools. */
  addressPool: string
  /** Running sandboxes per team before create answers 429 (§1.4; E2B base tier: 20). */
  maxSandboxes: number
  /** A sandbox's longest life from its (re)start; timeouts are capped to it (§1.4, §4.2). */
  maxLifetimeHours: number
  /** PostgreSQL instead of the embedded SQLite file (DESIGN.md: several api instances). */
  postgresUrl?: string | undefined
}

export function parseServeArgs(argv: string[]): ServeConfig {
  const { values } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string', default: '/var/lib/sandbar' },
      'templates-dir': { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      'api-port': { type: 'string', default: '3000' },
      'proxy-port': { type: 'string', default: '3001' },
      domain: { type: 'string', default: 'localhost' },
      prefix: { type: 'string', default: 'sb' },
      runtime: { type: 'string', default: 'crun' },
      'no-masquerade': { type: 'boolean', default: false },
      'address-pool': { type: 'string', default: '10.231.0.0/16' },
      'max-sandboxes': { type: 'string', default: '20' },
      'max-lifetime-hours': { type: 'string', default: '1' },
      'postgres-url': { type: 'string' },
    },
  })
  return {
    dataDir: path.resolve(values['data-dir']),
    templatesDir: values['templates-dir'],
    host: values.host,
    apiPort: port(values['api-port']),
    proxyPort: port(values['proxy-port']),
    domain: values.domain,
    prefix: values.prefix,
    runtime: runtimeName(values.runtime),
    masquerade: !values['no-masquerade'],
    addressPool: values['address-pool'],
    maxSandboxes: positiveInt(values['max-sandboxes'], 'max-sandboxes'),
    maxLifetimeHours: positiveInt(values['max-lifetime-hours'], 'max-lifetime-hours'),
    postgresUrl: values['postgres-url'],
  }
}

/** A flag the user got wrong: reported with the usage text, not a stack trace. */
export class UsageError extends Error {}

function runtimeName(value: string): RuntimeName {
  const runtime = RUNTIME_NAMES.find((name) => name === value)
  if (runtime === undefined) {
    throw new UsageError(`invalid --runtime '${value}' (one of ${RUNTIME_NAMES.join(', ')})`)
  }
  return runtime
}

function positiveInt(value: string, flag: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`invalid --${flag} '${value}'`)
  return n
}

function port(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`invalid port '${value}'`)
  return n
}

/**
 * The composition root: store, agent, control plane, api and proxy servers in one process.
 * SIGTERM/SIGINT close them; sandboxes keep running for the next start to adopt.
 */
export async function runServe(config: ServeConfig): Promise<void> {
  const logger = createLogger('sandbar')
  await mkdir(config.dataDir, { recursive: true })
  const store = await createStore(
    config.postgresUrl === undefined
      ? { sqlitePath: path.join(config.dataDir, 'sandbar.db') }
      : { postgresUrl: config.postgresUrl },
  )
  const clientEnv = await ensureClientEnv(store, config)
  const agent = await createAgent({
    dataDir: config.dataDir,
    templatesDir: config.templatesDir,
    prefix: config.prefix,
    runtime: config.runtime,
    addressPool: config.addressPool,
    masquerade: config.masquerade,
    pidsLimit: 1024,
    // scripts/build.mjs puts envd/ and idmapped-overlay next to sandbar.mjs, the bundle running this code.
    envdBuildDir: path.dirname(fileURLToPath(import.meta.url)),
    logger,
  })
  const controlPlane = createControlPlane({
    store,
    agent,
    logger,
    concurrencyLimit: config.maxSandboxes,
    maxLifetimeHours: config.maxLifetimeHours,
  })
  const api = createServer(getRequestListener(controlPlane.app.fetch))
  api.listen(config.apiPort, config.host)
  await once(api, 'listening')
  const proxy = createProxy({ domain: config.domain, directory: controlPlane.directory, logger })
  await proxy.listen(config.proxyPort, config.host)
  logger.info({ port: config.apiPort, host: config.host }, 'api listening')
  console.log(readyMessage(config, clientEnv))

  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'shutting down')
    await controlPlane.close()
    await Promise.all([proxy.close(), closeServer(api)])
    await agent.close()
    await store.close()
    process.exit(0)
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      shutdown(signal).catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed')
        process.exit(1)
      })
    })
  }
}

/**
 * On first start, a team and an API key, written to `<data>/client.env` (0600) for
 * `set -a; . client.env`; later starts keep the file. Returns its text.
 */
async function ensureClientEnv(store: Store, config: ServeConfig): Promise<string> {
  const file = path.join(config.dataDir, 'client.env')
  const existing = await readFile(file, 'utf8').catch(() => undefined)
  if (existing !== undefined) return existing.trim()
  const { team } = await store.ensureFirstTeam()
  const { key } = await store.createApiKey(team.id, 'default')
  const text = [
    `E2B_API_URL=http://localhost:${config.apiPort}`,
    `E2B_SANDBOX_URL=http://localhost:${config.proxyPort}`,
    `E2B_API_KEY=${key}`,
  ].join('\n')
  await writeFile(file, `${text}\n`, { mode: 0o600 })
  await chmod(file, 0o600)
  return text
}

/** What a person needs to point the e2b SDK and CLI at this service. */
function readyMessage(config: ServeConfig, clientEnv: string): string {
  const file = path.join(config.dataDir, 'client.env')
  const exports = clientEnv.split('\n').map((line) => `  export ${line}`)
  return [
    `Sandbar is serving the E2B API on port ${config.apiPort} and sandboxes on port ${config.proxyPort}.`,
    'Point the e2b SDK and CLI at it:',
    ...exports,
    `or load the same variables from ${file}:`,
    `  set -a; . ${file}; set +a`,
    'then, for example:',
    `  node -e "require('e2b').Sandbox.create().then(async s => { console.log((await s.commands.run('uname -a')).stdout); await s.kill() })"`,
  ].join('\n')
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error === undefined ? resolve() : reject(error)))
    server.closeAllConnections()
  })
}
