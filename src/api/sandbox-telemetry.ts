import { type Agent, SandboxNotFoundError } from '../agent/index.js'
import { KeyedQueue } from '../keyed-queue.js'
import type { Logger } from '../logger.js'
import type { Sandbox, Store } from '../store/index.js'
import { type PeriodicPasses, startPeriodicPasses } from './periodic-passes.js'
import { sampleEnvdMetrics } from './sandbox-metrics.js'
import { logEntryFromOutputLine } from './sandbox-output-lines.js'

/** A sandbox as far as telemetry needs it. */
type SandboxRef = Pick<Sandbox, 'teamID' | 'sandboxID' | 'startedAt'>

/**
 * What the control plane collects from sandboxes (§1.2 metrics and logs): envd's metrics as
 * a series, and the sandbox's own output (envd's log) as log entries beside the lifecycle
 * events. Collection of one sandbox's output is serialized, so no line is stored twice.
 */
export class SandboxTelemetry {
  private readonly collecting = new KeyedQueue()

  constructor(
    private readonly store: Store,
    private readonly agent: Agent,
    private readonly logger: Logger,
  ) {}

  /** Stores one metrics sample of a running sandbox; nothing when envd does not answer. */
  async sample(sandbox: Sandbox): Promise<void> {
    const sample = await sampleEnvdMetrics(this.agent, sandbox)
    if (sample !== undefined)
      await this.store.appendMetrics(sandbox.teamID, sandbox.sandboxID, sample)
  }

  /** Moves the sandbox's new output lines into its logs. A sandbox already gone has none. */
  collectOutput(sandbox: SandboxRef): Promise<void> {
    return this.collecting.run(sandbox.sandboxID, () => this.readOutput(sandbox))
  }

  /** Samples and collects every sandbox the agent runs (paused ones: output only). */
  async collectAll(): Promise<void> {
    for (const info of await this.agent.list()) {
      const sandbox = await this.store.getSandbox(info.sandboxID)
      if (sandbox === undefined) continue
      const work = [this.collectOutput(sandbox)]
      if (info.state === 'running') work.push(this.sample(sandbox))
      for (const result of await Promise.allSettled(work)) {
        if (result.status === 'rejected') {
          this.logger.warn({ err: result.reason, sandboxID: sandbox.sandboxID }, 'telemetry failed')
        }
      }
    }
  }

  /** Forgets log entries and samples past the retention period, of every sandbox. */
  async prune(now: Date): Promise<void> {
    const before = new Date(now.getTime() - RETENTION_MS)
    const pruned = await this.store.pruneTelemetry(before)
    if (pruned.logs + pruned.metrics > 0)
      this.logger.info({ ...pruned, before }, 'telemetry pruned')
  }

  private async readOutput(sandbox: SandboxRef): Promise<void> {
    const from = await this.store.outputBytesRead(sandbox.sandboxID)
    const output = await this.agent.readOutput(sandbox.sandboxID, from).catch((error: unknown) => {
      if (error instanceof SandboxNotFoundError) return undefined
      throw error
    })
    if (output === undefined || output.bytesRead === from) return
    const window = { startedAt: sandbox.startedAt, receivedAt: new Date() }
    const entries = output.lines.map((line) => logEntryFromOutputLine(line, window))
    await this.store.appendOutput(sandbox.teamID, sandbox.sandboxID, entries, output.bytesRead)
  }
}

/** How often every sandbox is sampled and its output collected (E2B samples every 5 s). */
const TELEMETRY_INTERVAL_MS = 5_000
/** How long logs and metrics are kept, and how often older ones are looked for. */
const RETENTION_MS = 7 * 24 * 3600 * 1000
const PRUNE_INTERVAL_MS = 3600 * 1000

/** Collects every sandbox's telemetry each interval, and prunes old telemetry hourly. */
export function startTelemetryLoop(telemetry: SandboxTelemetry, logger: Logger): PeriodicPasses {
  let lastPrune = 0
  return startPeriodicPasses(
    'telemetry',
    TELEMETRY_INTERVAL_MS,
    async () => {
      await telemetry.collectAll()
      const now = new Date()
      if (now.getTime() - lastPrune >= PRUNE_INTERVAL_MS) {
        lastPrune = now.getTime()
        await telemetry.prune(now)
      }
    },
    logger,
  )
}
