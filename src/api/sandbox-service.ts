import pLimit from 'p-limit'
import {
  type Agent,
  type EgressPolicy,
  type SandboxChange,
  type SandboxClaim,
  SandboxStateError,
  type SandboxTemplate,
} from '../agent/index.js'
import { elapsedMs } from '../elapsed-ms.js'
import type { Logger } from '../logger.js'
import {
  isListed,
  type LogQuery,
  type Sandbox,
  type SandboxLogEntry,
  type SandboxPage,
  type SandboxQuery,
  type SandboxVolumeMount,
  type Store,
  type Team,
} from '../store/index.js'
import { checkedEgressPolicy, refuseUnreachable } from './egress-rules.js'
import { apiErrors } from './errors.js'
import { newSandbox, sandboxTemplate } from './new-sandbox.js'
import { SandboxEvents } from './sandbox-events.js'
import { killIfPresent } from './sandbox-reconcile.js'
import { SandboxSlots } from './sandbox-slots.js'
import { SandboxTelemetry } from './sandbox-telemetry.js'
import { type PausedTier, pausedTier } from './sandbox-views.js'
import type { NetworkUpdate, NewSandbox } from './schemas/sandbox-requests.js'
import type { TemplateService } from './template-service.js'
import {
  refuseUnsupportedCreateFields,
  refuseUnsupportedNetworkFields,
} from './unsupported-fields.js'
import { type RequestedVolumeMount, resolveVolumeMounts } from './volume-mounts.js'
import type { WarmPools } from './warm-pools.js'

/**
 * Lifetime when the request names none: 15 s for `POST /sandboxes` (§1.3 NewSandbox), 300 s
 * for `POST /v2/sandboxes` (Addendum: NewSandboxV2), which the SDK calls without a timeout.
 */
const DEFAULT_TIMEOUT_S = { v1: 15, v2: 300 } as const
/** Wire contract §1.4 refreshes: duration default and minimum 15 s. */
export const REFRESH_MIN_S = 15

/**
 * Killed sandboxes taken off the host at once. A kill answers before its sandbox is torn down;
 * when every teardown of a mass kill ran together, creates meanwhile shared the host with all
 * of them (right after killing 1,000 idle sandboxes, a create took ~60 s). A few at a time
 * keep the host's cores busy and leave creates their share.
 */
const REMOVALS_AT_ONCE = 4

export interface SandboxServiceConfig {
  /** Running sandboxes per team before create answers 429 (§1.4): `sandbar serve --max-sandboxes`. */
  concurrencyLimit: number
  /** Lifetime cap from each (re)start (§4.2 MaxInstanceLength; E2B default 1 h). */
  maxLifetimeHours: number
  /**
   * Called once a killed sandbox has left the host: the layers it stacked may have lost their
   * last user (layer-collection.ts).
   */
  releaseLayers?: () => void
  /**
   * Called once a killed sandbox that mounted volumes has left the host: a deleted volume's
   * data may have lost its last holder (volume-collection.ts).
   */
  releaseVolumes?: () => void
}

/** Sandbox lifecycle over the store (what the API knows) and the agent (what runs). */
export class SandboxService {
  private readonly slots: SandboxSlots
  private readonly events: SandboxEvents
  /** Killed sandboxes still being taken off the host (`remove`). */
  private readonly removals = new Set<Promise<void>>()
  private readonly removalTurn = pLimit(REMOVALS_AT_ONCE)
  readonly telemetry: SandboxTelemetry

  constructor(
    private readonly store: Store,
    private readonly agent: Agent,
    private readonly templates: TemplateService,
    private readonly config: SandboxServiceConfig,
    private readonly logger: Logger,
    private readonly pools: WarmPools,
  ) {
    this.slots = new SandboxSlots(config.concurrencyLimit, (teamID) => store.countRunning(teamID))
    this.events = new SandboxEvents(store)
    this.telemetry = new SandboxTelemetry(store, agent, logger)
  }

  /** `POST /sandboxes` and `POST /v2/sandboxes` (§1.4 Create; Addendum: v2 is always secure). */
  async create(team: Team, body: NewSandbox, version: 'v1' | 'v2'): Promise<Sandbox> {
    const started = performance.now()
    // Before the template: `mcp` makes the SDK ask for `mcp-gateway`, which is not there either.
    refuseUnsupportedCreateFields(body)
    const resolved = await this.templates.resolveForSandbox(team, body.templateID)
    const times = this.lifetime(body.timeout ?? DEFAULT_TIMEOUT_S[version])
    const secure = version === 'v2' || body.secure === true
    if (body.network?.allowPublicTraffic === false && !secure) throw apiErrors.privateNeedsSecure()
    const egress = refuseUnreachable(
      checkedEgressPolicy({ ...body.network, allow_internet_access: body.allow_internet_access }),
      await this.agent.unreachableNetworks(),
    )
    const volumeMounts = await this.resolveVolumeMounts(team, body.volumeMounts ?? [])
    // A pooled sandbox is running already, and mounts are made when a sandbox starts.
    const pooledID = volumeMounts.length === 0 ? this.pools.take(resolved) : undefined
    const sandbox = newSandbox(team, body, secure, times, resolved, volumeMounts, pooledID)
    return this.launch(sandbox, sandboxTemplate(resolved), egress, {
      pooled: pooledID !== undefined,
      started,
    })
  }

  /**
   * Stores a new sandbox (a create's, a fork's) under its team's limit, starts it from
   * `template` (or claims it from a warm pool, `pooled`) and records it. `started` is when the
   * request began, for the log's duration.
   */
  async launch(
    sandbox: Sandbox,
    template: SandboxTemplate,
    egress: EgressPolicy,
    { pooled, started }: { pooled: boolean; started: number },
  ): Promise<Sandbox> {
    const slot = await this.slots.reserve(sandbox.teamID)
    // From here the `starting` row holds the team's slot.
    await slot.commit(() => this.store.insertSandbox({ ...sandbox, state: 'starting' }))
    await this.start(sandbox, template, egress, pooled)
    this.templates.recordSpawn(sandbox.templateID)
    // The sandbox runs and is stored: a log write that fails must not turn that into a 500.
    await this.events
      .record(sandbox, 'created', { templateID: sandbox.templateID })
      .catch((error: unknown) => {
        this.logger.error({ err: error, sandboxID: sandbox.sandboxID }, 'recording creation failed')
      })
    this.logger.info(
      {
        sandboxID: sandbox.sandboxID,
        teamID: sandbox.teamID,
        templateID: sandbox.templateID,
        durationMs: elapsedMs(started),
      },
      'sandbox created',
    )
    // A first sample now, so metrics exist before the telemetry loop's next pass.
    this.telemetry.sample(sandbox).catch((error: unknown) => {
      this.logger.warn({ err: error, sandboxID: sandbox.sandboxID }, 'first metrics sample failed')
    })
    return sandbox
  }

  /**
   * Runs a sandbox stored as `starting`, then marks it running (DESIGN.md "Who owns what":
   * store, host, confirm). A failure takes back both; a crash anywhere in between leaves the
   * `starting` row, which the next start's reconcile rolls back (sandbox-reconcile.ts).
   */
  private async start(
    sandbox: Sandbox,
    template: SandboxTemplate,
    egress: EgressPolicy,
    pooled: boolean,
  ): Promise<void> {
    const { sandboxID } = sandbox
    const settings = {
      envVars: sandbox.envVars,
      egress,
      accessToken: sandbox.envdAccessToken ?? undefined,
    }
    try {
      if (!pooled || !(await this.claimPooled(sandboxID, settings))) {
        await this.agent.create({
          template,
          cpuCount: sandbox.cpuCount,
          memoryMB: sandbox.memoryMB,
          diskSizeMB: sandbox.diskSizeMB,
          sandboxID,
          volumeMounts: sandbox.volumeMounts.map(({ volumeID, path }) => ({
            path,
            hostDir: this.agent.volumes.directory(volumeID),
          })),
          ...settings,
        })
      }
    } catch (error) {
      await this.store.removeSandbox(sandboxID)
      throw error
    }
    try {
      const running = await this.store.updateSandbox(sandboxID, { state: 'running' }, 'starting')
      if (running === undefined)
        throw new Error(`sandbox ${sandboxID} left the store while starting`)
    } catch (error) {
      await this.agent.kill(sandboxID)
      await this.store.removeSandbox(sandboxID)
      throw error
    }
  }

  /** The team's volumes a create mounts, or the contract's 400 naming every bad entry. */
  private async resolveVolumeMounts(
    team: Team,
    requested: readonly RequestedVolumeMount[],
  ): Promise<SandboxVolumeMount[]> {
    if (requested.length === 0) return []
    const idsByName = new Map<string, string>()
    for (const name of new Set(requested.map((mount) => mount.name))) {
      const volume = await this.store.findVolume(team.id, name)
      if (volume !== undefined) idsByName.set(name, volume.volumeID)
    }
    return resolveVolumeMounts(requested, idsByName)
  }

  /**
   * Hands a warm pool's sandbox to its client. One that cannot be handed over is removed, and
   * the create starts a sandbox of the same ID cold.
   */
  private async claimPooled(sandboxID: string, claim: SandboxClaim): Promise<boolean> {
    try {
      await this.agent.claim(sandboxID, claim)
      return true
    } catch (error) {
      this.logger.warn({ err: error, sandboxID }, 'claiming a pooled sandbox failed; starting one')
      await killIfPresent(this.agent, sandboxID)
      return false
    }
  }

  /** A sandbox of the team, or the contract's 404; one still starting is not there yet. */
  async get(team: Team, sandboxID: string): Promise<Sandbox> {
    const sandbox = await this.store.getSandbox(sandboxID, team.id)
    if (sandbox === undefined || !isListed(sandbox.state))
      throw apiErrors.sandboxNotFound(sandboxID)
    return sandbox
  }

  /** Paused sandboxes' tiers by ID, from the agent (sandbox-views.ts). */
  async pausedTiers(): Promise<Map<string, PausedTier>> {
    const tiers = new Map<string, PausedTier>()
    for (const info of await this.agent.list()) {
      const tier = pausedTier(info)
      if (tier !== undefined) tiers.set(info.sandboxID, tier)
    }
    return tiers
  }

  /** A paused sandbox's tier, from the agent (sandbox-views.ts). */
  async pausedTierOf(sandbox: Sandbox): Promise<PausedTier | undefined> {
    return sandbox.state === 'paused'
      ? pausedTier(await this.agent.get(sandbox.sandboxID))
      : undefined
  }

  /** What a running or paused sandbox changed against its template (a Sandbar extension). */
  async changes(team: Team, sandboxID: string): Promise<SandboxChange[]> {
    await this.get(team, sandboxID)
    return this.agent.changes(sandboxID)
  }

  /** The same as a tar stream in OCI layer form. */
  async changesArchive(team: Team, sandboxID: string): Promise<AsyncIterable<Uint8Array>> {
    await this.get(team, sandboxID)
    return this.agent.changesArchive(sandboxID)
  }

  /**
   * A sandbox's log entries (§1.2 logs): its lifecycle events and its own output, collected
   * up to now. They outlive the sandbox, as E2B's do; 404 only when the team never had it
   * (every sandbox logs its creation).
   */
  async logs(team: Team, sandboxID: string, query: LogQuery): Promise<SandboxLogEntry[]> {
    const live = await this.store.getSandbox(sandboxID, team.id)
    if (live !== undefined) await this.telemetry.collectOutput(live)
    const entries = await this.store.listLogs(team.id, sandboxID, query)
    if (entries.length === 0 && live === undefined) {
      const any = await this.store.listLogs(team.id, sandboxID, { limit: 1 })
      if (any.length === 0) throw apiErrors.sandboxNotFound(sandboxID)
    }
    return entries
  }

  /** The stored metrics series of a sandbox of the team (§1.2), oldest first. */
  async metrics(team: Team, sandboxID: string, range: { start?: Date; end?: Date }) {
    const sandbox = await this.get(team, sandboxID)
    return this.store.listMetrics(team.id, sandbox.sandboxID, range)
  }

  /** The newest sample of each listed sandbox the team has (§1.2 `GET /sandboxes/metrics`). */
  latestMetrics(team: Team, sandboxIDs: string[]) {
    return this.store.latestMetrics(team.id, sandboxIDs)
  }

  /** `GET /v2/sandboxes` (§1.2). */
  list(query: SandboxQuery): Promise<SandboxPage> {
    return this.store.listSandboxes(query)
  }

  /** `GET /sandboxes` (§1.2, deprecated v1): every running sandbox of the team, unpaged. */
  async listRunning(team: Team, metadata?: Record<string, string>): Promise<Sandbox[]> {
    const sandboxes: Sandbox[] = []
    let nextToken: string | undefined
    do {
      const page = await this.store.listSandboxes({
        teamID: team.id,
        states: ['running'],
        metadata,
        limit: 100,
        nextToken,
      })
      sandboxes.push(...page.sandboxes)
      nextToken = page.nextToken
    } while (nextToken !== undefined)
    return sandboxes
  }

  /** The team's running sandboxes (`X-Total-Running`, §1.1). */
  countRunning(team: Team): Promise<number> {
    return this.store.countRunning(team.id)
  }

  /** `DELETE /sandboxes/{id}` (§1.4): kills a running or paused sandbox; 404 when unknown. */
  async kill(team: Team, sandboxID: string): Promise<void> {
    const started = performance.now()
    const sandbox = await this.get(team, sandboxID)
    await this.remove(sandbox)
    await this.events.record(sandbox, 'killed')
    this.logger.info({ sandboxID, durationMs: elapsedMs(started) }, 'sandbox killed')
  }

  /** `POST /sandboxes/{id}/timeout` (§1.4): end = now + timeout, may shorten, capped. */
  async setTimeout(team: Team, sandboxID: string, timeoutS: number): Promise<void> {
    const sandbox = await this.get(team, sandboxID)
    // Only running sandboxes have a timeout; infra looks them up among running ones.
    if (sandbox.state !== 'running') throw apiErrors.sandboxNotFound(sandboxID)
    const now = Date.now()
    if (now >= sandbox.maxEndAt.getTime()) throw apiErrors.maxLengthExceeded()
    const end = Math.min(now + Math.max(timeoutS, 0) * 1000, sandbox.maxEndAt.getTime())
    const updated = await this.store.updateSandbox(sandboxID, { endAt: new Date(end) }, 'running')
    if (updated === undefined) throw apiErrors.sandboxNotFound(sandboxID)
  }

  /** `POST /sandboxes/{id}/refreshes` (§1.4): end = now + duration (≥ 15 s), never shortens. */
  async refresh(team: Team, sandboxID: string, durationS: number): Promise<void> {
    const sandbox = await this.get(team, sandboxID)
    if (sandbox.state !== 'running') throw apiErrors.sandboxNotFound(sandboxID)
    const wanted = Date.now() + Math.max(durationS, REFRESH_MIN_S) * 1000
    const end = Math.max(Math.min(wanted, sandbox.maxEndAt.getTime()), sandbox.endAt.getTime())
    const updated = await this.store.updateSandbox(sandboxID, { endAt: new Date(end) }, 'running')
    if (updated === undefined) throw apiErrors.sandboxNotFound(sandboxID)
  }

  /** `POST /sandboxes/{id}/resume` (§1.4, legacy): only a paused sandbox resumes. */
  async resumePaused(team: Team, sandboxID: string, timeoutS: number): Promise<Sandbox> {
    const sandbox = await this.get(team, sandboxID)
    if (sandbox.state === 'running') throw apiErrors.sandboxAlreadyRunning(sandboxID)
    return this.resume(sandboxID, this.checkTimeout(timeoutS))
  }

  /**
   * `PUT /sandboxes/{id}/network` (§1.3, §4.5): replaces the egress rules of a running sandbox
   * live, omitted lists cleared, and keeps them for the sandbox's detail and restarts.
   */
  async updateNetwork(team: Team, sandboxID: string, request: NetworkUpdate): Promise<void> {
    refuseUnsupportedNetworkFields(request)
    const sandbox = await this.get(team, sandboxID)
    const egress = refuseUnreachable(
      checkedEgressPolicy(request),
      await this.agent.unreachableNetworks(),
    )
    if (sandbox.state !== 'running') throw apiErrors.sandboxNotRunning(sandboxID)
    await this.agent.updateNetwork(sandboxID, egress)
    const network = {
      ...sandbox.network,
      allowOut: request.allowOut ?? [],
      denyOut: request.denyOut ?? [],
    }
    const patch = { network, allowInternetAccess: request.allow_internet_access ?? null }
    const updated = await this.store.updateSandbox(sandboxID, patch, 'running')
    if (updated === undefined) throw apiErrors.sandboxNotRunning(sandboxID)
    await this.events.record(sandbox, 'network updated', {
      allowOut: network.allowOut.join(','),
      denyOut: network.denyOut.join(','),
    })
  }

  /**
   * `POST /sandboxes/{id}/pause` (§1.4): 204, or 409 when already paused. Without
   * `keepMemory` its processes end and its files stay: its resume boots it.
   */
  async pause(
    team: Team,
    sandboxID: string,
    { keepMemory }: { keepMemory: boolean },
  ): Promise<void> {
    const started = performance.now()
    const sandbox = await this.get(team, sandboxID)
    if (sandbox.state === 'paused') throw apiErrors.sandboxAlreadyPaused(sandboxID)
    await this.pauseRunning(sandboxID, keepMemory)
    await this.events.record(sandbox, 'paused', { keepMemory: `${keepMemory}` })
    // Only the uncommon pause, without memory, says so: the usual one reads as before.
    const kind = keepMemory ? {} : { keepMemory }
    this.logger.info({ sandboxID, ...kind, durationMs: elapsedMs(started) }, 'sandbox paused')
  }

  /**
   * `POST /sandboxes/{id}/connect` and its v2 form (§1.4): a running sandbox's end only moves
   * later (200); a paused one resumes with the given timeout (201).
   */
  async connect(
    team: Team,
    sandboxID: string,
    timeoutS: number,
    options: { reboot?: boolean } = {},
  ): Promise<{ sandbox: Sandbox; resumed: boolean }> {
    const sandbox = await this.get(team, sandboxID)
    this.checkTimeout(timeoutS)
    if (sandbox.state === 'paused')
      return { sandbox: await this.resume(sandboxID, timeoutS, options), resumed: true }
    const wanted = Math.min(Date.now() + timeoutS * 1000, sandbox.maxEndAt.getTime())
    const endAt = new Date(Math.max(wanted, sandbox.endAt.getTime()))
    const updated = await this.store.updateSandbox(sandboxID, { endAt }, 'running')
    // Paused between the read and the update: resume it instead.
    if (updated === undefined) return this.connect(team, sandboxID, timeoutS, options)
    return { sandbox: updated, resumed: false }
  }

  /**
   * Resumes a paused sandbox until now + timeout, with `reboot` booted over its files; the
   * sandbox as stored after. A resumed sandbox runs again, so it takes a slot under the team's
   * limit like a new one (§1.4 429).
   */
  async resume(
    sandboxID: string,
    timeoutS: number,
    { reboot = false }: { reboot?: boolean } = {},
  ): Promise<Sandbox> {
    const paused = await this.store.getSandbox(sandboxID)
    if (paused === undefined || !isListed(paused.state)) throw apiErrors.sandboxNotFound(sandboxID)
    if (paused.state === 'running') return paused
    const started = performance.now()
    const slot = await this.slots.reserve(paused.teamID)
    try {
      await this.agent.resume(sandboxID, { reboot }).catch((error: unknown) => {
        if (!(error instanceof SandboxStateError)) throw error
      })
      const now = new Date()
      const updated = await slot.commit(() =>
        this.store.updateSandbox(
          sandboxID,
          {
            state: 'running',
            endAt: new Date(now.getTime() + timeoutS * 1000),
            maxEndAt: this.maxEndFrom(now),
          },
          'paused',
        ),
      )
      const sandbox = updated ?? (await this.store.getSandbox(sandboxID))
      if (sandbox === undefined) throw apiErrors.sandboxNotFound(sandboxID)
      // Only the call that moved it out of `paused` logs the resume; a concurrent one did not.
      if (updated !== undefined) {
        await this.events.record(sandbox, 'resumed', {
          timeout: `${timeoutS}`,
          reboot: `${reboot}`,
        })
        this.logger.info({ sandboxID, durationMs: elapsedMs(started) }, 'sandbox resumed')
      }
      return sandbox
    } finally {
      await slot.release()
    }
  }

  /**
   * What the expiry loop does to a sandbox past its end (§4.2): pause it when its lifecycle
   * says so (`autoPause` / `onTimeout: pause`), else kill it.
   */
  async expire(sandbox: Sandbox): Promise<void> {
    const started = performance.now()
    const log = this.logger.child({ sandboxID: sandbox.sandboxID })
    const action = sandbox.lifecycle.onTimeout === 'pause' ? 'paused' : 'killed'
    if (action === 'paused')
      await this.pauseRunning(sandbox.sandboxID, sandbox.lifecycle.keepMemory)
    else await this.remove(sandbox)
    await this.events.record(sandbox, 'timeout', { action })
    log.info({ action, durationMs: elapsedMs(started) }, 'sandbox expired')
  }

  /**
   * `sandbar serve --hibernate` at its stop: every running sandbox pauses, as a client's pause
   * would, and every paused one goes to disk, so that a host reboot loses none; each resumes
   * at its client's connect. One that fails stays as it was, and is counted.
   */
  async hibernateAll(): Promise<{ hibernated: number; failed: number }> {
    const tally = { hibernated: 0, failed: 0 }
    for (const sandbox of await this.store.allSandboxes()) {
      const { sandboxID } = sandbox
      if (sandbox.state !== 'running' && sandbox.state !== 'paused') continue
      try {
        if (sandbox.state === 'running') {
          await this.pauseRunning(sandboxID, true)
          await this.events.record(sandbox, 'paused')
        }
        await this.agent.hibernate(sandboxID)
        tally.hibernated++
      } catch (error) {
        tally.failed++
        this.logger.error({ err: error, sandboxID }, 'sandbox hibernation failed')
      }
    }
    return tally
  }

  private async pauseRunning(sandboxID: string, keepMemory: boolean): Promise<void> {
    try {
      await this.agent.pause(sandboxID, { keepMemory })
    } catch (error) {
      if (error instanceof SandboxStateError) throw apiErrors.sandboxAlreadyPaused(sandboxID)
      throw error
    }
    // For a paused sandbox `endAt` is the time of the pause (§1.3 SandboxDetail).
    await this.store.updateSandbox(sandboxID, { state: 'paused', endAt: new Date() }, 'running')
  }

  /**
   * Ends a sandbox for its client at once, and takes it off the host after the answer. The row
   * says `killing` first: from here no client or proxy finds it, the team's count still holds
   * it until the host has let go of it, and a crash before the row is gone leaves the next
   * start to finish the kill (sandbox-reconcile.ts).
   */
  private async remove(sandbox: Sandbox): Promise<void> {
    const { sandboxID } = sandbox
    await this.store.updateSandbox(sandboxID, { state: 'killing' })
    const removal = this.removalTurn(() => this.removeFromHost(sandbox))
      .catch((error: unknown) => {
        this.logger.error({ err: error, sandboxID }, 'removing a killed sandbox failed')
      })
      .finally(() => this.removals.delete(removal))
    this.removals.add(removal)
  }

  private async removeFromHost(sandbox: Sandbox): Promise<void> {
    const { sandboxID } = sandbox
    // Its last output goes to its logs before the file goes with the sandbox.
    await this.telemetry.collectOutput(sandbox).catch((error: unknown) => {
      this.logger.warn({ err: error, sandboxID }, 'collecting the last output failed')
    })
    await killIfPresent(this.agent, sandboxID)
    await this.store.removeSandbox(sandboxID)
    this.config.releaseLayers?.()
    if (sandbox.volumeMounts.length > 0) this.config.releaseVolumes?.()
  }

  /** Waits for the removals of killed sandboxes still under way (the service stopping). */
  async settled(): Promise<void> {
    await Promise.all([...this.removals])
  }

  /**
   * The start, end and lifetime cap of a sandbox starting now with this timeout; 400 for a
   * timeout out of range (§1.4).
   */
  lifetime(timeoutS: number): Pick<Sandbox, 'startedAt' | 'endAt' | 'maxEndAt'> {
    this.checkTimeout(timeoutS)
    const now = new Date()
    return {
      startedAt: now,
      endAt: new Date(now.getTime() + timeoutS * 1000),
      maxEndAt: this.maxEndFrom(now),
    }
  }

  private checkTimeout(timeoutS: number): number {
    if (timeoutS <= 0) throw apiErrors.timeoutNotPositive()
    if (timeoutS > this.config.maxLifetimeHours * 3600)
      throw apiErrors.timeoutTooLong(this.config.maxLifetimeHours)
    return timeoutS
  }

  private maxEndFrom(start: Date): Date {
    return new Date(start.getTime() + this.config.maxLifetimeHours * 3600 * 1000)
  }
}
