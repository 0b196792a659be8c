import type { Agent, SandboxInfo } from '../agent/index.js'
import type { Logger } from '../logger.js'
import type { Store } from '../store/index.js'
import { checkedEgressPolicy } from './egress-rules.js'
import { ApiError } from './errors.js'
import { sandboxTemplate } from './new-sandbox.js'
import { newSandboxID } from './sandbox-ids.js'
import { type ResolvedTemplate, resolveTemplateReference } from './template-resolution.js'

/** How often pools are checked without a create asking: rebuilt templates, failed fills. */
const CHECK_INTERVAL_MS = 10_000

/**
 * How long a refill waits after a take. A client that takes a sandbox runs its first command
 * within ~30 ms, through this process and on the host's cores; a sandbox starting beside it made
 * that command ~60% slower on a 2-core host (p50 30 against 19 ms, 30 creates). Not reset by
 * later takes: clients that create every few hundred ms would otherwise never see a refill, and
 * each of their creates after the first two started cold (4 of 30 pooled at 300 ms between
 * creates with a second's wait that every take reset; 29 of 30 with this).
 */
const REFILL_AFTER_TAKE_MS = 150

interface PoolMember {
  sandboxID: string
  buildID: string
  /** Its memory limit, counted against the pools' budget. */
  memoryMB: number
}

export interface WarmPoolsConfig {
  /**
   * Template → sandboxes kept ready, by any reference the first team can start (an ID, or a
   * name of its own).
   */
  sizes: ReadonlyMap<string, number>
  /** The most memory the members may be given in all, by their limits, in MiB. */
  memoryBudgetMB: number
}

/**
 * Sandboxes started ahead of their clients, per template (issue 12: code-interpreter-v1's
 * server takes a second to start; a client should not wait for it). A member is a whole
 * sandbox of the template's current build with its start command running and ready; a create
 * of that build takes one (`take`) and the agent hands it over (`Agent.claim`: the request's
 * env vars, token and egress rules). Pools refill one sandbox at a time, shortly after a take
 * and every CHECK_INTERVAL_MS; members of an older build are killed. Members are on no
 * team's list and outlive the service, as every sandbox does: the next start's reconcile
 * leaves them to the pools (`adoptable`), which take back those of a current build they have
 * room for and kill the rest.
 */
export class WarmPools {
  private readonly members = new Map<string, PoolMember[]>()
  private filling: Promise<void> | undefined
  private fillAgain = false
  private timer: NodeJS.Timeout | undefined
  private refillAfterTake: NodeJS.Timeout | undefined
  private closed = false
  /** What `warnOnce` said already, by key. */
  private readonly warned = new Set<string>()

  private readonly sizes: ReadonlyMap<string, number>

  constructor(
    private readonly store: Store,
    private readonly agent: Agent,
    private readonly config: WarmPoolsConfig,
    private readonly logger: Logger,
    /** Members an earlier run of the service left, unclaimed; the first fill sorts them. */
    private adoptable: SandboxInfo[] = [],
  ) {
    this.sizes = config.sizes
  }

  /** Starts filling the pools, now and on a timer. */
  start(): void {
    if (this.sizes.size === 0) {
      this.killUnadopted().catch((error: unknown) =>
        this.logger.error({ err: error }, 'removing pooled sandboxes of an earlier run failed'),
      )
      return
    }
    this.timer = setInterval(() => this.refill(), CHECK_INTERVAL_MS)
    this.refill()
  }

  /** A ready member of exactly this build, out of its pool; `undefined` when there is none. */
  take({ template, build }: ResolvedTemplate): string | undefined {
    // Taken or not, pools may have work: a member to replace, a newer build, a template that
    // became ready. A pass is a few store reads when there is none.
    this.refillAfterTake ??= setTimeout(() => {
      this.refillAfterTake = undefined
      this.refill()
    }, REFILL_AFTER_TAKE_MS)
    const pool = this.members.get(template.templateID) ?? []
    const index = pool.findIndex((member) => member.buildID === build.buildID)
    return index === -1 ? undefined : pool.splice(index, 1)[0]?.sandboxID
  }

  /** Stops filling; the members stay, for the next start to adopt. */
  async close(): Promise<void> {
    this.closed = true
    clearInterval(this.timer)
    clearTimeout(this.refillAfterTake)
    await this.filling
  }

  private refill(): void {
    if (this.closed || this.sizes.size === 0) return
    if (this.filling !== undefined) {
      this.fillAgain = true
      return
    }
    this.filling = this.fillAll()
      .catch((error: unknown) => this.logger.error({ err: error }, 'warm pool fill failed'))
      .finally(() => {
        this.filling = undefined
        if (this.fillAgain) {
          this.fillAgain = false
          this.refill()
        }
      })
  }

  private async fillAll(): Promise<void> {
    const { team } = await this.store.ensureFirstTeam()
    for (const [reference, size] of this.sizes) {
      let resolved: ResolvedTemplate
      try {
        resolved = await resolveTemplateReference(this.store, team, reference)
      } catch (error) {
        // Not built yet, or deleted: nothing to keep ready.
        if (error instanceof ApiError) continue
        throw error
      }
      const { templateID } = resolved.template
      const pool = this.members.get(templateID) ?? []
      this.members.set(templateID, pool)
      const stale = pool.filter((member) => member.buildID !== resolved.build.buildID)
      for (const member of stale) {
        pool.splice(pool.indexOf(member), 1)
        await this.kill(member.sandboxID)
      }
      // A snapshot's sandboxes restore its processes, their own state: never kept ready, so
      // `take` finds no member of its build and each create restores its own.
      if (resolved.result.snapshot !== undefined) {
        this.warnOnce(
          `snapshot ${reference}`,
          { template: reference },
          'warm pools keep no snapshot ready; pool left empty',
        )
        continue
      }
      this.adopt(resolved, pool, size)
      while (!this.closed && pool.length < size) {
        const { memoryMB } = resolved.build
        if (this.memoryInPools() + memoryMB > this.config.memoryBudgetMB) {
          // The operator asked for more: say so where serve's output shows it, once.
          this.warnOnce(
            `budget ${templateID}`,
            {
              templateID,
              kept: pool.length,
              asked: size,
              memoryMB,
              budgetMB: this.config.memoryBudgetMB,
            },
            'warm pool kept smaller than asked: its members count their memory limits against --warm-pool-memory; raise it to keep more',
          )
          break
        }
        pool.push(await this.startMember(resolved))
      }
    }
    await this.killUnadopted()
  }

  /** Takes back into `pool` the earlier run's members of exactly this build, up to `size`. */
  private adopt({ template, build, result }: ResolvedTemplate, pool: PoolMember[], size: number) {
    const sameBuild = (info: SandboxInfo) =>
      info.templateID === template.templateID &&
      info.state === 'running' &&
      info.layers.join('/') === result.layers.join('/')
    for (const info of this.adoptable.filter(sameBuild)) {
      if (pool.length >= size) break
      this.adoptable.splice(this.adoptable.indexOf(info), 1)
      pool.push({ sandboxID: info.sandboxID, buildID: build.buildID, memoryMB: info.memoryMB })
      this.logger.info(
        { templateID: template.templateID, sandboxID: info.sandboxID },
        'warm pool sandbox adopted',
      )
    }
  }

  /** Kills what the earlier run left that no pool took back: an older build, or no room. */
  private async killUnadopted(): Promise<void> {
    const left = this.adoptable
    this.adoptable = []
    for (const info of left) {
      await this.kill(info.sandboxID)
    }
  }

  private async startMember(resolved: ResolvedTemplate): Promise<PoolMember> {
    const { build, result } = resolved
    const started = performance.now()
    const sandboxID = newSandboxID()
    await this.agent.create({
      sandboxID,
      template: sandboxTemplate(resolved),
      cpuCount: build.cpuCount,
      memoryMB: build.memoryMB,
      diskSizeMB: build.diskSizeMB,
      envVars: result.envVars,
      egress: checkedEgressPolicy({}),
      warm: true,
    })
    this.logger.info(
      {
        templateID: resolved.template.templateID,
        sandboxID,
        durationMs: Math.round(performance.now() - started),
      },
      'warm pool sandbox ready',
    )
    return { sandboxID, buildID: build.buildID, memoryMB: build.memoryMB }
  }

  /** An operator's pool setting that cannot be met, said once, not at every fill. */
  private warnOnce(key: string, fields: Record<string, unknown>, message: string): void {
    if (this.warned.has(key)) return
    this.warned.add(key)
    this.logger.warn(fields, message)
  }

  private memoryInPools(): number {
    let total = 0
    for (const pool of this.members.values()) {
      for (const member of pool) total += member.memoryMB
    }
    return total
  }

  private async kill(sandboxID: string): Promise<void> {
    await this.agent.kill(sandboxID).catch((error: unknown) => {
      this.logger.warn({ err: error, sandboxID }, 'removing a pooled sandbox failed')
    })
  }
}
