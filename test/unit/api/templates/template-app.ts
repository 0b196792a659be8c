import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Hono } from 'hono'
import { type Logger, pino } from 'pino'
import type { Agent, SandboxClaim, SandboxRequest } from '../../../../src/agent/index.js'
import { createApiApp } from '../../../../src/api/app.js'
import { SandboxForks } from '../../../../src/api/sandbox-forks.js'
import { SandboxService } from '../../../../src/api/sandbox-service.js'
import { SnapshotService } from '../../../../src/api/snapshot-service.js'
import { TemplateService } from '../../../../src/api/template-service.js'
import { TemplateUploads } from '../../../../src/api/template-uploads.js'
import { VolumeService } from '../../../../src/api/volume-service.js'
import { VolumeTokens } from '../../../../src/api/volume-tokens.js'
import { WarmPools, type WarmPoolsConfig } from '../../../../src/api/warm-pools.js'
import {
  type Builder,
  type BuildReporter,
  type BuildRequest,
  createTemplateFiles,
  type TemplateFiles,
} from '../../../../src/builder/index.js'
import {
  type BuildResult,
  createStore,
  type Store,
  type Team,
} from '../../../../src/store/index.js'

/** A build the recording builder was handed, and whether the test has finished it. */
export interface SubmittedBuild {
  request: BuildRequest
  reporter: BuildReporter
  settled: boolean
}

/**
 * A builder that builds nothing: it records what it is handed, and the test drives each build
 * through its reporter as a real builder would.
 */
export class RecordingBuilder implements Builder {
  readonly submitted: SubmittedBuild[] = []
  readonly cancelled: { buildID: string; reason: string }[] = []
  /** Added to the builds counted as active, to reach the concurrency limit cheaply. */
  extraActive = 0

  constructor(readonly files: TemplateFiles) {}

  submit(request: BuildRequest, reporter: BuildReporter): void {
    this.submitted.push({ request, reporter, settled: false })
  }

  cancel(buildID: string, reason: string): void {
    this.cancelled.push({ buildID, reason })
    const build = this.submitted.find((entry) => entry.request.buildID === buildID)
    if (build !== undefined && !build.settled) {
      build.settled = true
      void build.reporter.failed({ message: reason })
    }
  }

  activeBuilds(teamID: string): number {
    const own = this.submitted.filter((entry) => entry.request.teamID === teamID && !entry.settled)
    return own.length + this.extraActive
  }

  build(buildID: string): SubmittedBuild {
    const build = this.submitted.find((entry) => entry.request.buildID === buildID)
    if (build === undefined) throw new Error(`build ${buildID} was not submitted`)
    return build
  }

  /** Runs a submitted build to ready as a builder does: started, a log line per step, ready. */
  async succeed(buildID: string, result: BuildResult): Promise<void> {
    const build = this.build(buildID)
    await build.reporter.started()
    build.reporter.log({ level: 'info', message: '[base] FROM e2bdev/base', step: 'base' })
    build.settled = true
    await build.reporter.ready(result)
  }

  async close(): Promise<void> {}
}

/** What the recording agent was asked besides creates, and how its claims answer. */
export interface AgentLog {
  claimed: { sandboxID: string; claim: SandboxClaim }[]
  killed: string[]
  /** Claims throw this, as a sandbox that died in its pool would make them. */
  claimError?: Error
}

/** An agent that records creates and runs nothing (route tests start no sandboxes). */
export function recordingAgent(
  created: SandboxRequest[],
  log: AgentLog = { claimed: [], killed: [] },
): Agent {
  const refuse = async (): Promise<never> => {
    throw new Error('not used by these tests')
  }
  return {
    async create(request) {
      created.push(request)
      return {
        sandboxID: request.sandboxID,
        templateID: request.template.templateID,
        layers: request.template.layers,
        waiting: request.warm === true,
        state: 'running',
        hibernated: false,
        filesOnly: false,
        runtime: 'crun',
        cpuCount: request.cpuCount,
        memoryMB: request.memoryMB,
        address: '10.0.0.2',
        envdURL: 'http://10.0.0.2:49983',
        createdAt: new Date(),
      }
    },
    get: async () => undefined,
    list: async () => [],
    pause: refuse,
    hibernate: refuse,
    changes: refuse,
    changesArchive: refuse,
    resume: refuse,
    snapshot: refuse,
    removeSnapshot: refuse,
    snapshots: async () => [],
    async claim(sandboxID, claim) {
      if (log.claimError !== undefined) throw log.claimError
      log.claimed.push({ sandboxID, claim })
    },
    updateNetwork: refuse,
    unreachableNetworks: async () => [],
    readOutput: async () => ({ lines: [], bytesRead: 0 }),
    usage: async () => undefined,
    async kill(sandboxID) {
      log.killed.push(sandboxID)
    },
    commit: refuse,
    layers: { has: refuse, add: refuse, squash: refuse, collect: refuse },
    volumes: {
      create: refuse,
      remove: refuse,
      usage: refuse,
      list: async () => [],
      directory: () => {
        throw new Error('not used by these tests')
      },
      files: () => {
        throw new Error('not used by these tests')
      },
    },
    reconciled: { adopted: [], removed: [] },
    close: async () => {},
  }
}

/** A ready build's result as a builder would report it. */
export function buildResult(overrides: Partial<BuildResult> = {}): BuildResult {
  return {
    layers: ['layer-a', 'layer-b'],
    defaultUser: 'user',
    defaultWorkdir: '/home/user',
    envVars: { FROM_TEMPLATE: 'yes', SHARED: 'template' },
    ...overrides,
  }
}

/** A JSON reply as the tests read it: its shape is what `expect` checks, not the compiler. */
// biome-ignore lint/suspicious/noExplicitAny: replies are checked by expect, field by field
export type Json = any

/** A response whose `json()` the tests may read into without casts at every use. */
export type JsonResponse = Omit<Response, 'json'> & { json(): Promise<Json> }

/** The fixture's upload cap: twice the API's body limit, so uploads show they are exempt. */
export const UPLOAD_CAP = 2 * 1024 * 1024

export interface TemplateApp {
  app: Hono
  store: Store
  builder: RecordingBuilder
  templates: TemplateService
  created: SandboxRequest[]
  agentLog: AgentLog
  warmPools: WarmPools
  team: Team
  key: string
  filesDir: string
  /** `app.request` with the team's API key. */
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<JsonResponse>
  /** `app.request` without the API key (the signed upload). */
  request(path: string, init: RequestInit): Promise<JsonResponse>
  close(): Promise<void>
}

/**
 * The API over a real SQLite store in a temporary directory, a recording builder and agent;
 * `agent` replaces some of the recording agent's methods.
 */
export async function templateApp(
  options: { warmPools?: WarmPoolsConfig; agent?: Partial<Agent>; logger?: Logger } = {},
): Promise<TemplateApp> {
  const dir = await mkdtemp(path.join(tmpdir(), 'sbt-templates-'))
  const store = await createStore({
    sqlitePath: path.join(dir, 'store.sqlite'),
    tokenKey: randomBytes(32),
  })
  const { team } = await store.ensureFirstTeam()
  const { key } = await store.createApiKey(team.id, 'test')
  const filesDir = path.join(dir, 'files')
  const builder = new RecordingBuilder(createTemplateFiles(filesDir))
  const logger = options.logger ?? pino({ level: 'silent' })
  const created: SandboxRequest[] = []
  const agentLog: AgentLog = { claimed: [], killed: [] }
  const agent = { ...recordingAgent(created, agentLog), ...options.agent }
  const templates = new TemplateService(store, builder, logger, {
    removeSnapshot: (snapshotID) => agent.removeSnapshot(snapshotID),
  })
  const uploads = new TemplateUploads(store, builder.files, {
    uploadKey: randomBytes(32),
    maxUploadBytes: UPLOAD_CAP,
  })
  const warmPools = new WarmPools(
    store,
    agent,
    options.warmPools ?? { sizes: new Map(), memoryBudgetMB: 0 },
    logger,
  )
  const service = new SandboxService(
    store,
    agent,
    templates,
    { concurrencyLimit: 10, maxLifetimeHours: 1 },
    logger,
    warmPools,
  )
  const volumeTokens = new VolumeTokens(randomBytes(32), 'https://api.sandbar.test', 3600)
  const volumes = new VolumeService(
    store,
    agent,
    volumeTokens,
    { defaultSizeMB: 16 },
    logger,
    () => {},
  )
  const app = createApiApp({
    store,
    service,
    snapshots: new SnapshotService(store, agent, service, logger),
    forks: new SandboxForks(store, agent, service, 10, logger),
    templates,
    uploads,
    volumes,
    agent,
    volumeTokens,
    domain: 'sandbar.test',
    logger,
  })
  return {
    app,
    store,
    builder,
    templates,
    created,
    agentLog,
    warmPools,
    team,
    key,
    filesDir,
    request: (route, init) => Promise.resolve(app.request(route, init)),
    call: (method, route, body, headers = {}) =>
      Promise.resolve(
        app.request(route, {
          method,
          headers: { 'X-API-Key': key, 'Content-Type': 'application/json', ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      ),
    close: async () => {
      await warmPools.close()
      await store.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** Registers a template build and runs it to ready; its IDs. */
export async function readyTemplate(
  t: TemplateApp,
  name: string,
  result: BuildResult = buildResult(),
  body: Record<string, unknown> = {},
): Promise<{ templateID: string; buildID: string }> {
  const registered = await t.call('POST', '/v3/templates', { name, ...body })
  if (registered.status !== 202) throw new Error(`register: ${await registered.text()}`)
  const { templateID, buildID } = await registered.json()
  const started = await t.call('POST', `/v2/templates/${templateID}/builds/${buildID}`, {
    fromImage: 'debian:bookworm',
  })
  if (started.status !== 202) throw new Error(`start: ${await started.text()}`)
  await t.builder.succeed(buildID, result)
  return { templateID, buildID }
}
