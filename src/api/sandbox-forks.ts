import { randomUUID } from 'node:crypto'
import type { Agent, EgressPolicy, SandboxTemplate } from '../agent/index.js'
import { elapsedMs } from '../elapsed-ms.js'
import type { Logger } from '../logger.js'
import type { Sandbox, Store, Team } from '../store/index.js'
import { storedEgressPolicy } from './egress-rules.js'
import { ApiError, apiErrors } from './errors.js'
import { SandboxEvents } from './sandbox-events.js'
import { newAccessToken, newSandboxID } from './sandbox-ids.js'
import type { SandboxService } from './sandbox-service.js'
import { refuseUncheckpointable, snapshotOnAgent, sourceBuildResult } from './snapshot-sources.js'

/** §1.3 SandboxForkRequest: `count` 1..100 (infra's cap), default 1. */
export const MAX_FORKS = 100
/** Forks started at once: about what a 2-core host restores without them slowing each other. */
const FORKS_AT_ONCE = 4
/** §1.3 SandboxForkRequest: `timeout` default 15 s. */
const FORK_DEFAULT_TIMEOUT_S = 15

/** §1.3 SandboxForkRequest, as the schema reads it. */
export interface ForkRequest {
  count?: number
  timeout?: number
}

/** §1.3 SandboxForkResult: exactly one of the two. */
export type ForkResult = { sandbox: Sandbox } | { error: ApiError }

/**
 * Forks (issue 14, wire contract §4.3): a running sandbox checkpointed once in place into a
 * snapshot of the agent's that no template names, `count` new sandboxes started from it, then
 * the snapshot removed. Each fork succeeds or fails alone; the source runs on untouched.
 */
export class SandboxForks {
  private readonly events: SandboxEvents

  constructor(
    private readonly store: Store,
    private readonly agent: Agent,
    private readonly sandboxes: SandboxService,
    /** Running sandboxes per team (`--max-sandboxes`): the source holds one of them. */
    private readonly concurrencyLimit: number,
    private readonly logger: Logger,
  ) {
    this.events = new SandboxEvents(store)
  }

  /** `POST /sandboxes/{id}/fork` (§1.2): one result per fork, in order. */
  async fork(team: Team, sandboxID: string, request: ForkRequest): Promise<ForkResult[]> {
    const started = performance.now()
    const count = request.count ?? 1
    if (count < 1) throw apiErrors.forkCountTooLow()
    if (count > MAX_FORKS) throw apiErrors.forkCountTooHigh(MAX_FORKS)
    if (count >= this.concurrencyLimit) throw apiErrors.forkCountOverLimit(this.concurrencyLimit)
    const timeoutS = request.timeout ?? FORK_DEFAULT_TIMEOUT_S
    // A timeout out of range refuses the whole fork before anything is frozen.
    this.sandboxes.lifetime(timeoutS)
    const source = await this.sandboxes.get(team, sandboxID)
    refuseUncheckpointable(source, 'forked')
    const { defaultUser, defaultWorkdir } = await sourceBuildResult(this.store, source)
    const egress = storedEgressPolicy(source)
    // The agent's name for it: no build holds it, so a random one, told apart from builds'.
    const snapshotID = `fork-${randomUUID()}`
    const report = await snapshotOnAgent(this.agent, sandboxID, snapshotID, (state) =>
      state === 'paused'
        ? apiErrors.sandboxForkPaused(sandboxID)
        : apiErrors.sandboxCannotFork(sandboxID, state),
    )
    const template: SandboxTemplate = {
      templateID: source.templateID,
      layers: report.layers,
      defaultUser,
      defaultWorkdir,
      snapshotID,
    }
    const results: ForkResult[] = []
    try {
      // A few at a time: each restore reads the whole memory image, and a hundred at once on
      // a small host would starve the running sandboxes and time out together.
      let next = 0
      const worker = async () => {
        while (next < count) {
          const index = next++
          results[index] = await this.startFork(source, template, egress, timeoutS)
        }
      }
      await Promise.all(Array.from({ length: Math.min(count, FORKS_AT_ONCE) }, worker))
    } finally {
      // Its forks run on their own; their layers stay while they stack them.
      await this.agent.removeSnapshot(snapshotID).catch((error: unknown) => {
        this.logger.warn({ err: error, sandboxID, snapshotID }, 'removing a fork snapshot failed')
      })
    }
    const forks = results.flatMap((result) => ('sandbox' in result ? [result.sandbox] : []))
    this.logger.info(
      { sandboxID, count, started: forks.length, durationMs: elapsedMs(started) },
      'sandbox forked',
    )
    await this.events
      .record(source, 'forked', { forks: forks.map((fork) => fork.sandboxID).join(',') })
      .catch((error: unknown) => {
        this.logger.error({ err: error, sandboxID }, 'recording a fork failed')
      })
    return results
  }

  /** One fork, started from the snapshot; its failure is its result. */
  private async startFork(
    source: Sandbox,
    template: SandboxTemplate,
    egress: EgressPolicy,
    timeoutS: number,
  ): Promise<ForkResult> {
    const started = performance.now()
    try {
      const fork = forkOf(source, this.sandboxes.lifetime(timeoutS))
      return {
        sandbox: await this.sandboxes.launch(fork, template, egress, { pooled: false, started }),
      }
    } catch (error) {
      if (error instanceof ApiError) return { error }
      this.logger.error({ err: error, sandboxID: source.sandboxID }, 'a fork failed to start')
      return { error: apiErrors.internal() }
    }
  }
}

/**
 * A fork of `source` as the store keeps it: the source's template, build, sizes, env,
 * metadata, network and lifecycle (infra's fork copies them all), with an ID and tokens of its
 * own, always secure as a v2 create is, so its reply carries an envd access token.
 */
export function forkOf(
  source: Sandbox,
  times: Pick<Sandbox, 'startedAt' | 'endAt' | 'maxEndAt'>,
): Sandbox {
  return {
    ...source,
    ...times,
    sandboxID: newSandboxID(),
    state: 'running',
    envdAccessToken: newAccessToken(),
    trafficAccessToken: source.network.allowPublicTraffic ? null : newAccessToken(),
  }
}
