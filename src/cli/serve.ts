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
import { createStore, loadTokenKey, type Store } from '../store/index.js'

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
  await makeDataDirPrivate(config.dataDir)
  const tokenKey = await loadTokenKey(path.join(config.dataDir, 'token.key'))
  const store = await createStore(
    config.postgresUrl === undefined
      ? { sqlitePath: path.join(config.dataDir, 'sandbar.db'), tokenKey }
      : { postgresUrl: config.postgresUrl, tokenKey },
  )
  const createdClientEnv = await ensureClientEnv(store, config)
  const agent = await createAgent({
    dataDir: config.dataDir,
    templatesDir: config.templatesDir,
    prefix: config.prefix,
    runtime: config.runtime,
    addressPool: config.addressPool,
    masquerade: config.masquerade,
    pidsLimit: 1024,
    maxSandboxes: config.maxSandboxes,
    // scripts/build.mjs puts envd/ and idmapped-overlay next to sandbar.mjs, the bundle running this code.
    envdBuildDir: path.dirname(fileURLToPath(import.meta.url)),
    logger,
  })
  const controlPlane = await createControlPlane({
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
  console.log(readyMessage(config, createdClientEnv))

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
 * The data directory holds the store, the token key and client.env: other host users may not
 * list it (0711). It stays traversable because sandboxes' roots live below it and the runtime
 * reaches them as each sandbox's own root (create-agent.ts); every secret in it is a 0600 file.
 */
async function makeDataDirPrivate(dataDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o711 })
  await chmod(dataDir, 0o711)
}

/** `<data>/client.env`: the settings a client needs, the API key among them. */
function clientEnvPath(config: ServeConfig): string {
  return path.join(config.dataDir, 'client.env')
}

/**
 * On first start, a team and an API key, written to `<data>/client.env` (0600) for
 * `set -a; . client.env`; later starts keep the file. Returns the file's text when this call
 * created it, which is the one time the key may be printed: service logs keep what a
 * service prints, and the key must not outlive its first showing there.
 */
async function ensureClientEnv(store: Store, config: ServeConfig): Promise<string | undefined> {
  const file = clientEnvPath(config)
  const existing = await readFile(file, 'utf8').catch(() => undefined)
  if (existing !== undefined) {
    // The file of an older install, or one copied with looser modes, is root's alone again.
    await chmod(file, 0o600)
    return undefined
  }
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

/**
 * What a person needs to point the e2b SDK and CLI at this service: the settings themselves
 * when this start created them, else only the file that holds them (readable by root alone).
 */
function readyMessage(config: ServeConfig, createdClientEnv: string | undefined): string {
  const file = clientEnvPath(config)
  const settings =
    createdClientEnv === undefined
      ? [`Point the e2b SDK and CLI at it with the settings in ${file}:`]
      : [
          'Point the e2b SDK and CLI at it (the API key is shown this once):',
          ...createdClientEnv.split('\n').map((line) => `  export ${line}`),
          `or load the same variables from ${file}:`,
        ]
  return [
    `Sandbar is serving the E2B API on port ${config.apiPort} and sandboxes on port ${config.proxyPort}.`,
    ...settings,
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
