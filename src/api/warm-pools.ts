import type { Agent } from '../agent/index.js'
import type { Logger } from '../logger.js'
import type { Store } from '../store/index.js'
import { checkedEgressPolicy } from './egress-rules.js'
import { ApiError } from './errors.js'
import { sandboxTemplate } from './new-sandbox.js'
import { newSandboxID } from './sandbox-ids.js'
import { type ResolvedTemplate, resolveTemplateReference } from './template-resolution.js'

/** How often pools are checked without a create asking: rebuilt templates, failed fills. */
const CHECK_INTERVAL_MS = 10_000

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
 * env vars, token and egress rules). Pools refill one sandbox at a time, after each take and
 * every CHECK_INTERVAL_MS; members of an older build are killed. Members are on no team's
 * list: the store never sees them, so a restart's reconcile removes them as unlisted and the
 * pools fill again.
 */
export class WarmPools {
  private readonly members = new Map<string, PoolMember[]>()
  private filling: Promise<void> | undefined
  private fillAgain = false
  private timer: NodeJS.Timeout | undefined
  private closed = false

  private readonly sizes: ReadonlyMap<string, number>

  constructor(
    private readonly store: Store,
    private readonly agent: Agent,
    private readonly config: WarmPoolsConfig,
    private readonly logger: Logger,
  ) {
    this.sizes = config.sizes
  }

  /** Starts filling the pools, now and on a timer. */
  start(): void {
    if (this.sizes.size === 0) return
    this.timer = setInterval(() => this.refill(), CHECK_INTERVAL_MS)
    this.refill()
  }

  /** A ready member of exactly this build, out of its pool; `undefined` when there is none. */
  take({ template, build }: ResolvedTemplate): string | undefined {
    // Taken or not, pools may have work: a member to replace, a newer build, a template that
    // became ready. A pass is a few store reads when there is none.
    this.refill()
    const pool = this.members.get(template.templateID) ?? []
    const index = pool.findIndex((member) => member.buildID === build.buildID)
    return index === -1 ? undefined : pool.splice(index, 1)[0]?.sandboxID
  }

  /** Stops filling and removes every member. */
  async close(): Promise<void> {
    this.closed = true
    clearInterval(this.timer)
    await this.filling
    const all = [...this.members.values()].flat()
    this.members.clear()
    await Promise.all(all.map((member) => this.kill(member)))
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
        await this.kill(member)
      }
      while (!this.closed && pool.length < size) {
        if (this.memoryInPools() + resolved.build.memoryMB > this.config.memoryBudgetMB) {
          this.logger.debug({ templateID, size: pool.length }, 'warm pools at their memory budget')
          break
        }
        pool.push(await this.startMember(resolved))
      }
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

  private memoryInPools(): number {
    let total = 0
    for (const pool of this.members.values()) {
      for (const member of pool) total += member.memoryMB
    }
    return total
  }

  private async kill(member: PoolMember): Promise<void> {
    await this.agent.kill(member.sandboxID).catch((error: unknown) => {
      this.logger.warn(
        { err: error, sandboxID: member.sandboxID },
        'removing a pooled sandbox failed',
      )
    })
  }
}
