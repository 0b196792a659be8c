import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { chmod, mkdir } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { totalmem } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { getRequestListener } from '@hono/node-server'
import {
  chooseMaxSandboxes,
  createAgent,
  RUNTIME_NAMES,
  type RuntimeName,
  readHostResources,
} from '../agent/index.js'
import {
  BASE_TEMPLATE,
  type ControlPlane,
  createControlPlane,
  MAX_VOLUME_SIZE_MB,
  MIN_VOLUME_SIZE_MB,
  type WarmPoolsConfig,
} from '../api/index.js'
import { createBuilder } from '../builder/index.js'
import { elapsedMs } from '../elapsed-ms.js'
import { CODE_INTERPRETER_TEMPLATE } from '../interpreter/template.js'
import {
  createLogger,
  defaultLogFormat,
  LOG_FORMATS,
  type LogFormat,
  type Logger,
} from '../logger.js'
import { createProxy } from '../proxy/index.js'
import { createStore, loadTokenKey } from '../store/index.js'
import { readyMessage, writeClientEnv } from './client-env.js'
import { lockDataDir } from './data-dir-lock.js'
import { proxyCertificate, sandboxDomain, unresolvableDomainWarning } from './sandbox-domain.js'

/** Tasks (processes and threads) one sandbox may hold. */
const SANDBOX_PIDS_LIMIT = 1024

/** `sandbar serve` settings, from flags. */
export interface ServeConfig {
  dataDir: string
  templatesDir?: string
  host: string
  apiPort: number
  proxyPort: number
  /** What clients append to `api.` and `<port>-<id>.` (sandbox-domain.ts); a port may follow. */
  domain: string
  /** The operator's certificate and key for `*.<domain>`; Sandbar makes its own without them. */
  tlsCertFile?: string | undefined
  tlsKeyFile?: string | undefined
  prefix: string
  /** The OCI runtime new sandboxes run on; each sandbox records its own. */
  runtime: RuntimeName
  masquerade: boolean
  /** Build sandboxes are masqueraded even with `masquerade` off. */
  masqueradeBuilds: boolean
  /** Certificate authorities build steps trust (a TLS-intercepting proxy's). */
  buildCaFile?: string | undefined
  /** Build and serve `code-interpreter-v1` (what `@e2b/code-interpreter` starts). */
  codeInterpreter: boolean
  /** Sandboxes kept started for templates' creates (api warm-pools.ts). */
  warmPools: WarmPoolsConfig
  /** How long a sandbox stays paused in memory before its processes hibernate to disk. */
  hibernateAfterSeconds: number
  /** At SIGTERM/SIGINT, pause every running sandbox and hibernate every paused one. */
  hibernateOnStop: boolean
  /** KSM shares envd's pages across sandboxes (agent memory-merging.ts). */
  shareEnvdMemory: boolean
  /** Leave layers no template uses: the layer store is shared with other services. */
  keepUnusedLayers: boolean
  /** IPv4 pool that sandbox /30 networks come from; agents on one host need disjoint pools. */
  addressPool: string
  /**
   * Running sandboxes per team before create answers 429 (§1.4); unset, what the host holds
   * (agent sandbox-capacity.ts).
   */
  maxSandboxes?: number | undefined
  /** A sandbox's longest life from its (re)start; timeouts are capped to it (§1.4, §4.2). */
  maxLifetimeHours: number
  /** PostgreSQL instead of the embedded SQLite file (DESIGN.md: several api instances). */
  postgresUrl?: string | undefined
  /** How stderr's log lines read: for a person (`pretty`) or for machines (`json`). */
  logFormat: LogFormat
  /** The size limit of a volume whose create names none, in MiB. */
  volumeSizeMB: number
  /** How long a volume token is valid (wave2-contracts §2.2: 1 h). */
  volumeTokenTtlSeconds: number
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
      domain: { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      prefix: { type: 'string', default: 'sb' },
      runtime: { type: 'string', default: 'crun' },
      'no-masquerade': { type: 'boolean', default: false },
      'masquerade-builds': { type: 'boolean', default: false },
      'build-ca-file': { type: 'string' },
      'keep-unused-layers': { type: 'boolean', default: false },
      'no-code-interpreter': { type: 'boolean', default: false },
      'warm-pool': { type: 'string', multiple: true, default: [] },
      'warm-pool-memory': { type: 'string' },
      'hibernate-after': { type: 'string', default: '600' },
      hibernate: { type: 'boolean', default: false },
      'share-envd-memory': { type: 'boolean', default: false },
      'address-pool': { type: 'string', default: '10.231.0.0/16' },
      'max-sandboxes': { type: 'string' },
      'max-lifetime-hours': { type: 'string', default: '1' },
      'postgres-url': { type: 'string' },
      'log-format': { type: 'string' },
      'volume-size-mb': { type: 'string', default: '10240' },
      'volume-token-ttl': { type: 'string', default: '3600' },
    },
  })
  if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined)) {
    throw new UsageError('--tls-cert and --tls-key go together')
  }
  const proxyPort = port(values['proxy-port'])
  return {
    dataDir: path.resolve(values['data-dir']),
    templatesDir: values['templates-dir'],
    host: values.host,
    apiPort: port(values['api-port']),
    proxyPort,
    domain: sandboxDomain(values.domain, proxyPort),
    tlsCertFile: values['tls-cert'],
    tlsKeyFile: values['tls-key'],
    prefix: values.prefix,
    runtime: runtimeName(values.runtime),
    masquerade: !values['no-masquerade'],
    masqueradeBuilds: !values['no-masquerade'] || values['masquerade-builds'],
    buildCaFile: values['build-ca-file'],
    keepUnusedLayers: values['keep-unused-layers'],
    codeInterpreter: !values['no-code-interpreter'],
    warmPools: {
      sizes: warmPoolSizes(values['warm-pool'], !values['no-code-interpreter']),
      memoryBudgetMB:
        values['warm-pool-memory'] === undefined
          ? defaultWarmPoolMemoryMB()
          : positiveInt(values['warm-pool-memory'], 'warm-pool-memory'),
    },
    hibernateAfterSeconds: nonNegativeInt(values['hibernate-after'], 'hibernate-after'),
    hibernateOnStop: values.hibernate,
    shareEnvdMemory: values['share-envd-memory'],
    addressPool: values['address-pool'],
    maxSandboxes:
      values['max-sandboxes'] === undefined
        ? undefined
        : positiveInt(values['max-sandboxes'], 'max-sandboxes'),
    maxLifetimeHours: positiveInt(values['max-lifetime-hours'], 'max-lifetime-hours'),
    postgresUrl: values['postgres-url'],
    logFormat:
      values['log-format'] === undefined ? defaultLogFormat() : logFormat(values['log-format']),
    volumeSizeMB: volumeSize(values['volume-size-mb']),
    volumeTokenTtlSeconds: positiveInt(values['volume-token-ttl'], 'volume-token-ttl'),
  }
}

/**
 * `--warm-pool TEMPLATE=N` flags over the defaults: two `base` sandboxes, and one
 * code-interpreter-v1, whose server takes a second to start; `=0` turns a pool off.
 */
function warmPoolSizes(flags: string[], codeInterpreter: boolean): Map<string, number> {
  const pools = new Map<string, number>([[BASE_TEMPLATE.templateID, 2]])
  if (codeInterpreter) pools.set(CODE_INTERPRETER_TEMPLATE.templateID, 1)
  for (const flag of flags) {
    const match = /^([a-z0-9][a-z0-9_-]*)=(\d+)$/.exec(flag)
    if (match?.[1] === undefined || match[2] === undefined) {
      throw new UsageError(
        `--warm-pool takes TEMPLATE_ID=N (like code-interpreter-v1=2), not '${flag}'`,
      )
    }
    pools.set(match[1], Number(match[2]))
  }
  for (const [templateID, size] of pools) if (size === 0) pools.delete(templateID)
  return pools
}

/** A tenth of the host's memory, by the members' limits: waiting sandboxes stay a small share. */
function defaultWarmPoolMemoryMB(): number {
  return Math.floor(totalmem() / 1024 / 1024 / 10)
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

function logFormat(value: string): LogFormat {
  const format = LOG_FORMATS.find((name) => name === value)
  if (format === undefined) {
    throw new UsageError(`invalid --log-format '${value}' (one of ${LOG_FORMATS.join(', ')})`)
  }
  return format
}

function nonNegativeInt(value: string, flag: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`invalid --${flag} '${value}'`)
  return n
}

function positiveInt(value: string, flag: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`invalid --${flag} '${value}'`)
  return n
}

function volumeSize(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < MIN_VOLUME_SIZE_MB || n > MAX_VOLUME_SIZE_MB) {
    throw new UsageError(
      `invalid --volume-size-mb '${value}' (${MIN_VOLUME_SIZE_MB} to ${MAX_VOLUME_SIZE_MB})`,
    )
  }
  return n
}

function port(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`invalid port '${value}'`)
  return n
}

/**
 * The composition root: store, agent, control plane, api and proxy servers in one process.
 * SIGTERM/SIGINT close them; sandboxes keep running for the next start to adopt (with
 * `--hibernate`, they are paused and written to disk first).
 */
export async function runServe(config: ServeConfig): Promise<void> {
  const started = performance.now()
  const logger = createLogger('sandbar', { format: config.logFormat })
  await makeDataDirPrivate(config.dataDir)
  lockDataDir(config.dataDir)
  const tokenKey = await loadTokenKey(path.join(config.dataDir, 'token.key'))
  // Its own key, not token.key's: deleting the file voids every volume token and nothing else.
  // Every api instance on one database needs the same file, as for token.key.
  const volumeTokenKey = await loadTokenKey(path.join(config.dataDir, 'volume-token.key'))
  const store = await phase(logger, 'store open', () =>
    createStore(
      config.postgresUrl === undefined
        ? { sqlitePath: path.join(config.dataDir, 'sandbar.db'), tokenKey }
        : { postgresUrl: config.postgresUrl, tokenKey },
    ),
  )
  const certificate = await proxyCertificate(config.dataDir, config.domain, {
    certFile: config.tlsCertFile,
    keyFile: config.tlsKeyFile,
  })
  const clientSettings = { domain: config.domain, caFile: certificate.caFile }
  const clientEnv = await writeClientEnv(store, config.dataDir, clientSettings)
  const limit = chooseMaxSandboxes(
    config.maxSandboxes,
    await readHostResources(config.addressPool),
    { memoryMB: BASE_TEMPLATE.sizes.memoryMB, pidsLimit: SANDBOX_PIDS_LIMIT },
  )
  const agent = await phase(logger, 'agent ready', () =>
    createAgent({
      dataDir: config.dataDir,
      templatesDir: config.templatesDir,
      prefix: config.prefix,
      runtime: config.runtime,
      addressPool: config.addressPool,
      masquerade: config.masquerade,
      masqueradeBuilds: config.masqueradeBuilds,
      pidsLimit: SANDBOX_PIDS_LIMIT,
      maxSandboxes: limit.maxSandboxes,
      shareEnvdMemory: config.shareEnvdMemory,
      // scripts/build.mjs puts envd/ and idmapped-mount next to sandbar.mjs, the bundle running this code.
      envdBuildDir: path.dirname(fileURLToPath(import.meta.url)),
      logger,
    }),
  )
  const templatesDir = config.templatesDir ?? config.dataDir
  const builder = await createBuilder({
    agent,
    filesDir: path.join(config.dataDir, 'template-files'),
    // Beside the layers, so a pulled image moves into its layer by rename.
    workDir: path.join(templatesDir, 'build-work'),
    caFile: config.buildCaFile,
    logger,
  })
  const controlPlane = await phase(logger, 'control plane ready', () =>
    createControlPlane({
      store,
      agent,
      builder,
      // Signs COPY upload URLs; a new key each start only voids URLs handed out before it.
      uploadKey: randomBytes(32),
      collectLayers: !config.keepUnusedLayers,
      logger,
      concurrencyLimit: limit.maxSandboxes,
      maxLifetimeHours: config.maxLifetimeHours,
      domain: config.domain,
      warmPools: config.warmPools,
      hibernateAfterMs: config.hibernateAfterSeconds * 1000,
      volumes: {
        tokenKey: volumeTokenKey,
        tokenTtlSeconds: config.volumeTokenTtlSeconds,
        defaultSizeMB: config.volumeSizeMB,
      },
    }),
  )
  await phase(logger, 'base template ready', () =>
    controlPlane.templates.ensureSystemTemplate(BASE_TEMPLATE),
  )
  if (config.codeInterpreter) await ensureCodeInterpreter(controlPlane, logger)
  controlPlane.warmPools.start()
  const apiListener = getRequestListener(controlPlane.app.fetch)
  const api = createServer(apiListener)
  api.listen(config.apiPort, config.host)
  await once(api, 'listening')
  const proxy = createProxy({
    domain: config.domain,
    directory: controlPlane.directory,
    logger,
    tls: certificate,
    api: apiListener,
  })
  await proxy.listen(config.proxyPort, config.host)
  logger.info({ port: config.apiPort, host: config.host }, 'api listening')
  logger.info({ durationMs: elapsedMs(started) }, 'sandbar ready')
  const ports = { api: config.apiPort, proxy: config.proxyPort }
  console.log(readyMessage(config.dataDir, ports, clientSettings, clientEnv))
  console.log(limit.summary)
  const warning = await unresolvableDomainWarning(config.domain)
  if (warning !== undefined) console.log(warning)

  let listenersClosed: Promise<unknown> | undefined
  const closeListeners = () => {
    listenersClosed ??= Promise.all([proxy.close(), closeServer(api)])
    return listenersClosed
  }
  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'shutting down')
    if (config.hibernateOnStop) {
      // The listeners go first: no request moves a sandbox while they are written to disk.
      await closeListeners()
      const hibernating = performance.now()
      const { hibernated, failed } = await controlPlane.hibernateAll()
      const durationMs = elapsedMs(hibernating)
      logger[failed === 0 ? 'info' : 'warn'](
        { hibernated, failed, durationMs },
        'sandboxes hibernated',
      )
    }
    await controlPlane.close()
    await builder.close()
    await closeListeners()
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

/** Runs one start-up step and logs how long it took, so a slow start says where. */
/**
 * Builds code-interpreter-v1 (minutes the first time: Debian's Python packages). Sandbar serves
 * without it when that fails: only `@e2b/code-interpreter` needs it.
 */
async function ensureCodeInterpreter(controlPlane: ControlPlane, logger: Logger): Promise<void> {
  const { templateID } = CODE_INTERPRETER_TEMPLATE
  try {
    await phase(logger, `${templateID} template ready`, () =>
      controlPlane.templates.ensureSystemTemplate(CODE_INTERPRETER_TEMPLATE),
    )
  } catch (error) {
    logger.error(
      { err: error, templateID },
      `${templateID} is not available: its build installs packages from Debian's archive, which build sandboxes reach unless --no-masquerade is given without --masquerade-builds. Fix that and restart, or pass --no-code-interpreter.`,
    )
  }
}

async function phase<T>(logger: Logger, message: string, step: () => Promise<T>): Promise<T> {
  const started = performance.now()
  const result = await step()
  logger.info({ durationMs: elapsedMs(started) }, message)
  return result
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

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error === undefined ? resolve() : reject(error)))
    server.closeAllConnections()
  })
}
