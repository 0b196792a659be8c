import type { ApiKeyMask } from './api-key.js'
import { createKyselyStore } from './kysely-store.js'
import { sealLegacyTokens } from './legacy-tokens.js'
import { migrateToLatest } from './migrations/migrate.js'
import { openPostgres } from './postgres-store.js'
import type { SandboxOrder } from './sandbox-cursor.js'
import { openSqlite } from './sqlite-store.js'
import { TokenSeal } from './token-seal.js'

export { API_KEY_PREFIX, type ApiKeyMask } from './api-key.js'
export { InvalidNextTokenError, type SandboxOrder } from './sandbox-cursor.js'
export { loadTokenKey } from './token-seal.js'

/**
 * Which database backs the store (an SQLite file, the default, or a PostgreSQL URL) and the
 * key that seals sandbox tokens in it (token-seal.ts; `loadTokenKey` keeps it in a file).
 */
export type StoreConfig = ({ sqlitePath: string } | { postgresUrl: string }) & { tokenKey: Buffer }

/** A team: the owner of API keys, sandboxes and (as its slug) a template namespace. */
export interface Team {
  id: string
  name: string
  slug: string
  createdAt: Date
}

/** A team API key as listed: never its plaintext, which only `createApiKey` returns. */
export interface ApiKey {
  id: string
  teamID: string
  name: string
  mask: ApiKeyMask
  createdAt: Date
  lastUsedAt: Date | null
}

/**
 * Sandbox states: the public ones (wire contract §4.2), and `starting`, a create in progress
 * (stored before the sandbox runs, so a crash mid-create leaves a row that the next start
 * rolls back), and `killing`, a kill in progress (stored before the host cleanup, so a crash
 * mid-kill leaves a row that the next start finishes). Both take a slot of the team's limit
 * but are listed nowhere. A killed sandbox is removed from the store.
 */
export type SandboxState = 'starting' | 'running' | 'paused' | 'killing'

/** The states a client sees; `starting` and `killing` rows are a change under way. */
export type ListedSandboxState = Exclude<SandboxState, 'starting' | 'killing'>

/** Whether a row is listed, found and proxied: not while it is created or removed. */
export function isListed(state: SandboxState): state is ListedSandboxState {
  return state === 'running' || state === 'paused'
}

/** Egress and ingress settings (wire contract §1.3 `SandboxNetworkConfig`). */
export interface SandboxNetwork {
  allowOut: string[]
  denyOut: string[]
  allowPublicTraffic: boolean
  maskRequestHost?: string
}

/** What happens at the timeout and on traffic while paused (wire contract §4.2, §4.4). */
export interface SandboxLifecycle {
  onTimeout: 'kill' | 'pause'
  autoResume: boolean
  /** Pause keeps memory (`autoPauseMemory`); false = filesystem-only pause. */
  keepMemory: boolean
}

/** A volume mounted into a sandbox (wave2-contracts §2.4): by name on the wire, by ID here. */
export interface SandboxVolumeMount {
  volumeID: string
  name: string
  /** Where it appears inside the sandbox. */
  path: string
}

/** One sandbox as the API knows it: the fields of `SandboxDetail` plus what it needs later. */
export interface Sandbox {
  sandboxID: string
  teamID: string
  templateID: string
  alias: string | null
  state: SandboxState
  startedAt: Date
  /** When the timeout fires (for a paused sandbox: when it was paused). */
  endAt: Date
  /** The lifetime cap that `endAt` may not pass (wire contract §4.2 MaxInstanceLength). */
  maxEndAt: Date
  cpuCount: number
  memoryMB: number
  diskSizeMB: number
  metadata: Record<string, string>
  envVars: Record<string, string>
  envdAccessToken: string | null
  trafficAccessToken: string | null
  allowInternetAccess: boolean | null
  network: SandboxNetwork
  lifecycle: SandboxLifecycle
  envdVersion: string
  volumeMounts: SandboxVolumeMount[]
  /**
   * The template build it started from (a fork: its source's), whose user, workdir and env a
   * snapshot of it keeps; null for sandboxes stored before snapshots.
   */
  buildID: string | null
}

/** The fields a running sandbox may change; everything else is fixed at create. */
export type SandboxPatch = Partial<
  Pick<
    Sandbox,
    'state' | 'startedAt' | 'endAt' | 'maxEndAt' | 'network' | 'allowInternetAccess' | 'lifecycle'
  >
>

/** `GET /v2/sandboxes` filters (wire contract §1.2); every given filter must match. */
export interface SandboxQuery {
  teamID: string
  /** Default: running and paused. */
  states?: ListedSandboxState[]
  /** Exact key/value pairs, all of which must be present. */
  metadata?: Record<string, string>
  /** Inclusive lower bound on the start time. */
  startedAfter?: Date
  /** Matches the template ID or the template alias the sandbox was created with. */
  template?: string
  /** By start time, sandbox ID breaking ties; default `desc`. */
  order?: SandboxOrder
  /** Page size, 1..100. */
  limit: number
  /** The `nextToken` of the previous page; throws InvalidNextTokenError when not ours. */
  nextToken?: string
}

/** One page of sandboxes; `nextToken` is set when more pages exist (`X-Next-Token`). */
export interface SandboxPage {
  sandboxes: Sandbox[]
  nextToken?: string
}

/** Wire contract §1.3 `LogLevel`. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

/** One sandbox log line (wire contract §1.3 `SandboxLogEntry`). */
export interface SandboxLogEntry {
  timestamp: Date
  level: LogLevel
  message: string
  fields: Record<string, string>
}

/** `GET /v2/sandboxes/{id}/logs` options (wire contract §1.2). */
export interface LogQuery {
  /** Forward: entries at or after it, oldest first. Backward: at or before it, newest first. */
  cursor?: Date
  /** Default forward. */
  direction?: 'forward' | 'backward'
  /** The lowest level returned. */
  level?: LogLevel
  /** A case-sensitive substring of the message. */
  search?: string
  limit: number
}

/** One sample of a sandbox's resource use (envd `GET /metrics`, wire contract §1.3). */
export interface SandboxMetricSample {
  timestamp: Date
  cpuCount: number
  cpuUsedPct: number
  memUsed: number
  memTotal: number
  memCache: number
  diskUsed: number
  diskTotal: number
}

/** A sample and the sandbox it belongs to, as `appendMetrics` stores it. */
export interface StoredMetricSample {
  teamID: string
  sandboxID: string
  sample: SandboxMetricSample
}

/** Wire contract §1.3 `TemplateBuildStatus`. */
export type TemplateBuildStatus = 'waiting' | 'building' | 'ready' | 'error'

/** A template: a team's named sandbox environment, whose builds hold its layers. */
export interface Template {
  templateID: string
  teamID: string
  /**
   * The alias, unique among the team's live templates; `<team slug>/<name>` from elsewhere. An
   * unnamed snapshot's is its own ID: it has no alias (api template-names.ts).
   */
  name: string
  public: boolean
  createdAt: Date
  updatedAt: Date
  lastSpawnedAt: Date | null
  spawnCount: number
  /** Set by `DELETE /templates/{id}`; a deleted template resolves nowhere and is not rebuilt. */
  deletedAt: Date | null
  /**
   * Set for a snapshot template (`POST /sandboxes/{id}/snapshots` made it): the sandbox it was
   * first taken from. `GET /snapshots` lists these, `GET /templates` the others.
   */
  sourceSandboxID: string | null
}

/** What sandboxes of a ready build need: the agent's layers and envd's defaults (§2.4). */
export interface BuildResult {
  /** Layer IDs in the agent's layer store, lowest first. */
  layers: string[]
  /**
   * The step layers a squashed build was made from (`layers` then holds one layer): kept as
   * the cache of the template's next build.
   */
  cacheLayers?: string[]
  defaultUser: string
  defaultWorkdir: string
  envVars: Record<string, string>
  /** Started in every new sandbox; create returns once `readyCmd` succeeds (§2.5). */
  startCmd?: string
  readyCmd?: string
  /**
   * Set for a snapshot's build: its sandboxes restore the agent's snapshot of the same ID as
   * the build (Agent.snapshot) instead of booting, and run no start command.
   */
  snapshot?: { sourceSandboxID: string }
}

/** Why a build failed (§1.3 `BuildStatusReason`, without its derived `logEntries`). */
export interface BuildFailure {
  message: string
  step?: string
}

/** One build of a template (§1.3 `TemplateBuild`). */
export interface TemplateBuild {
  buildID: string
  templateID: string
  status: TemplateBuildStatus
  createdAt: Date
  updatedAt: Date
  finishedAt: Date | null
  cpuCount: number
  memoryMB: number
  diskSizeMB: number
  envdVersion: string | null
  /** The tags this build takes when it becomes ready (§1.4 `POST /v3/templates`). */
  tags: string[]
  /** Set once ready. */
  result: BuildResult | null
  /** Set once failed. */
  failure: BuildFailure | null
}

/** The fields of a build that change after it is registered. */
export type TemplateBuildPatch = Partial<
  Pick<TemplateBuild, 'status' | 'updatedAt' | 'finishedAt' | 'envdVersion' | 'result' | 'failure'>
>

/** A tag pointing at one build of a template (§1.3 `TemplateTag`). */
export interface TemplateTag {
  templateID: string
  tag: string
  buildID: string
  createdAt: Date
}

/** One build log line (§1.3 `BuildLogEntry`). */
export interface BuildLogEntry {
  timestamp: Date
  level: LogLevel
  message: string
  /** `base`, `1`..`N`, `finalize` (§2.4). */
  step?: string
}

/** `GET /snapshots` filters (wire contract §1.2); every given filter must match. */
export interface SnapshotQuery {
  teamID: string
  /** The sandbox a snapshot template was first taken from. */
  sourceSandboxID?: string
  templateID?: string
  /** Only this tag; without it, the tag most recently pointed at one of its ready builds. */
  tag?: string
}

/** A snapshot template as `GET /snapshots` lists it, by one tag of a ready build. */
export interface SnapshotEntry {
  template: Template
  tag: string
}

/** Build logs by position (`GET .../status`'s `logsOffset`), at or above `level`. */
export interface BuildLogQuery {
  offset: number
  limit: number
  level?: LogLevel
}

/**
 * Templates, builds, tags and build logs (issue 11): what the template routes and the builder
 * share. Names compare as stored; the api lower-cases them before they arrive.
 */
export interface TemplateStore {
  /** Stores a new template; throws if the team already has a live template of that name. */
  insertTemplate(template: Template): Promise<void>
  /** A template by ID, deleted ones included (the caller tells 404 from "has been deleted"). */
  getTemplate(templateID: string): Promise<Template | undefined>
  /** The team's live template of that name. */
  findTemplate(teamID: string, name: string): Promise<Template | undefined>
  /** The team's live templates, newest first. */
  listTemplates(teamID: string): Promise<Template[]>
  updateTemplate(
    templateID: string,
    patch: Partial<Pick<Template, 'public' | 'updatedAt' | 'deletedAt'>>,
  ): Promise<Template | undefined>
  /** Counts a sandbox started from the template (`spawnCount`, `lastSpawnedAt`). */
  recordSpawn(templateID: string, at: Date): Promise<void>

  insertBuild(build: TemplateBuild): Promise<void>
  getBuild(buildID: string): Promise<TemplateBuild | undefined>
  /** The template's builds, newest first. */
  listBuilds(templateID: string): Promise<TemplateBuild[]>
  /** Applies the patch unless (with `ifStatus`) the build is no longer in one of those states. */
  updateBuild(
    buildID: string,
    patch: TemplateBuildPatch,
    ifStatus?: TemplateBuildStatus[],
  ): Promise<TemplateBuild | undefined>
  /** Builds of every template still `waiting` or `building`: what a restart finds unfinished. */
  unfinishedBuilds(): Promise<TemplateBuild[]>

  /** Points each tag at the build, replacing where the tag pointed before. */
  assignTags(templateID: string, tags: string[], buildID: string): Promise<void>
  /** Removes the tags; returns those that existed. */
  removeTags(templateID: string, tags: string[]): Promise<string[]>
  listTags(templateID: string): Promise<TemplateTag[]>
  getTag(templateID: string, tag: string): Promise<TemplateTag | undefined>
  /**
   * Layer IDs that live data references: every ready build of a live template that a tag
   * points at, or that is the template's newest ready build. Everything else may be collected.
   */
  layersInUse(): Promise<Set<string>>
  /**
   * The team's live snapshot templates that a tag points at a ready build of, newest first
   * (creation time, then ID), each with the tag most recently pointed (or, filtered by tag,
   * that tag).
   */
  listSnapshots(query: SnapshotQuery): Promise<SnapshotEntry[]>
  /**
   * The IDs of every ready snapshot build of a live template, of any team: the agent's
   * snapshots that creates may still start from (api snapshot-collection.ts).
   */
  liveSnapshotBuildIDs(): Promise<Set<string>>

  appendBuildLogs(buildID: string, entries: BuildLogEntry[]): Promise<void>
  /** The build's log entries in the order appended, filtered by level, then paged. */
  listBuildLogs(buildID: string, query: BuildLogQuery): Promise<BuildLogEntry[]>
}

/**
 * A volume (issue 15): a team's named storage, whose data lives on the agent's host. Deleting
 * one marks it (`deletedAt`): its name is free at once, and the row stays until the host has
 * removed the data (api volume-collection.ts).
 */
export interface Volume {
  volumeID: string
  teamID: string
  /** Unique among the team's live volumes (wave2-contracts §2.1). */
  name: string
  /** The size limit, in MiB. */
  sizeMB: number
  createdAt: Date
  deletedAt: Date | null
}

/** Volumes as the volume routes and the data collection see them. */
export interface VolumeStore {
  /** Stores a new volume; throws if the team already has a live volume of that name. */
  insertVolume(volume: Volume): Promise<void>
  /** A live volume by ID; with `teamID`, another team's is not found. */
  getVolume(volumeID: string, teamID?: string): Promise<Volume | undefined>
  /** The team's live volume of that name. */
  findVolume(teamID: string, name: string): Promise<Volume | undefined>
  /** The team's live volumes, oldest first. */
  listVolumes(teamID: string): Promise<Volume[]>
  /** Marks the team's live volume deleted; false when it has none by that ID. */
  deleteVolume(volumeID: string, teamID: string, at: Date): Promise<boolean>
  /** Deleted volumes whose data is still to be removed, longest deleted first. */
  deletedVolumes(): Promise<Volume[]>
  /** Every volume the store knows, live or deleted: what the host's volumes are held against. */
  allVolumeIDs(): Promise<Set<string>>
  /** Drops a deleted volume's row once its data is gone; a live one is kept. */
  forgetVolume(volumeID: string): Promise<void>
}

/**
 * The control plane's state (DESIGN.md § State): teams, hashed API keys, sandboxes and their
 * logs. One implementation over Kysely serves SQLite and PostgreSQL alike.
 */
export interface Store extends TemplateStore, VolumeStore {
  /** Creates the default team unless one exists; `created` says whether this call made it. */
  ensureFirstTeam(): Promise<{ team: Team; created: boolean }>
  /** Creates a team; throws if the slug is taken. */
  createTeam(name: string, slug: string): Promise<Team>
  /** Creates a key for the team; the plaintext `key` is returned here and never again. */
  createApiKey(teamID: string, name: string): Promise<{ apiKey: ApiKey; key: string }>
  /** The team owning the plaintext key (and marks the key used), or undefined. */
  teamForApiKey(key: string): Promise<Team | undefined>
  /** The team whose slug (its template namespace) this is. */
  findTeamBySlug(slug: string): Promise<Team | undefined>

  /** Stores a new sandbox; throws if its ID is taken. */
  insertSandbox(sandbox: Sandbox): Promise<void>
  /** A sandbox by ID; with `teamID`, a sandbox of another team is not found. */
  getSandbox(sandboxID: string, teamID?: string): Promise<Sandbox | undefined>
  /** The listed sandboxes that exist, by ID, in one read. */
  getSandboxes(sandboxIDs: string[]): Promise<Map<string, Sandbox>>
  /**
   * Applies the patch and returns the sandbox as stored, or undefined when it does not exist
   * or (with `ifState`) is no longer in that state — how concurrent transitions lose cleanly.
   */
  updateSandbox(
    sandboxID: string,
    patch: SandboxPatch,
    ifState?: SandboxState,
  ): Promise<Sandbox | undefined>
  /** Forgets a killed sandbox (its logs stay); false when it did not exist. */
  removeSandbox(sandboxID: string): Promise<boolean>
  listSandboxes(query: SandboxQuery): Promise<SandboxPage>
  /**
   * Running and starting sandboxes of the team: the concurrency limit (429) and
   * `X-Total-Running`. A killed one (`killing`) is not: its client has let it go, and may
   * start another while the host is still taking it down.
   */
  countRunning(teamID: string): Promise<number>
  /** Every sandbox of every team, in any state: what reconcile holds against the agent. */
  allSandboxes(): Promise<Sandbox[]>
  /** Running sandboxes of every team whose `endAt` is at or before `now`, soonest first. */
  expiredSandboxes(now: Date): Promise<Sandbox[]>

  appendLogs(teamID: string, sandboxID: string, entries: SandboxLogEntry[]): Promise<void>
  /** Works after the sandbox is removed; see LogQuery for the order. */
  listLogs(teamID: string, sandboxID: string, query: LogQuery): Promise<SandboxLogEntry[]>
  /** How many bytes of the sandbox's own output its logs hold already; 0 at first. */
  outputBytesRead(sandboxID: string): Promise<number>
  /** Appends entries read from the sandbox's output and moves its cursor, in one transaction. */
  appendOutput(
    teamID: string,
    sandboxID: string,
    entries: SandboxLogEntry[],
    bytesRead: number,
  ): Promise<void>

  /** Stores samples of any sandboxes, in one statement. */
  appendMetrics(samples: StoredMetricSample[]): Promise<void>
  /** The samples from `start` to `end` (both inclusive), oldest first. */
  listMetrics(
    teamID: string,
    sandboxID: string,
    range: { start?: Date; end?: Date },
  ): Promise<SandboxMetricSample[]>
  /** The newest sample of each listed sandbox that has one. */
  latestMetrics(teamID: string, sandboxIDs: string[]): Promise<Map<string, SandboxMetricSample>>
  /** Deletes log entries and metric samples older than `before`; how many of each went. */
  pruneTelemetry(before: Date): Promise<{ logs: number; metrics: number }>

  close(): Promise<void>
}

/**
 * Opens the configured database, brings its schema up to date, seals tokens an older version
 * left in plaintext, and returns the store.
 */
export async function createStore(config: StoreConfig): Promise<Store> {
  const seal = new TokenSeal(config.tokenKey)
  const { db, dialect } =
    'sqlitePath' in config ? openSqlite(config.sqlitePath) : openPostgres(config.postgresUrl)
  try {
    await migrateToLatest(db, dialect)
    await sealLegacyTokens(db, seal)
  } catch (error) {
    await db.destroy()
    throw error
  }
  return createKyselyStore(db, dialect, seal)
}
