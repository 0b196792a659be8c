import { type Agent, cpuUsedPercent, SandboxNotFoundError } from '../agent/index.js'
import { KeyedQueue } from '../keyed-queue.js'
import type { Logger } from '../logger.js'
import type { Sandbox, Store, StoredMetricSample } from '../store/index.js'
import { type PeriodicPasses, startPeriodicPasses } from './periodic-passes.js'
import { logEntryFromOutputLine } from './sandbox-output-lines.js'

/** A sandbox as far as telemetry needs it. */
type SandboxRef = Pick<Sandbox, 'teamID' | 'sandboxID' | 'startedAt'>

interface CpuReading {
  cpuTimeUs: number
  at: number
}

/**
 * What the control plane collects from sandboxes (§1.2 metrics and logs): their use of CPU,
 * memory and disk as a series, read by the agent on the host, and the sandbox's own output
 * (envd's log) as log entries beside the lifecycle events. Collection of one sandbox's output
 * is serialized, so no line is stored twice.
 */
export class SandboxTelemetry {
  private readonly collecting = new KeyedQueue()
  /**
   * Each sandbox's output cursor as this process last read or stored it, so that a pass over a
   * quiet sandbox reads no row. Only the API in front of a sandbox's agent moves its cursor.
   */
  private readonly cursors = new Map<string, number>()
  /** Each running sandbox's CPU time at its last sample, which the next one's CPU use is from. */
  private readonly cpuTimes = new Map<string, CpuReading>()

  constructor(
    private readonly store: Store,
    private readonly agent: Agent,
    private readonly logger: Logger,
  ) {}

  /** Stores one metrics sample of a running sandbox; nothing when it is not running. */
  async sample(sandbox: SandboxRef): Promise<void> {
    const sample = await this.measure(sandbox)
    if (sample !== undefined) await this.store.appendMetrics([sample])
  }

  /** Moves the sandbox's new output lines into its logs. A sandbox already gone has none. */
  collectOutput(sandbox: SandboxRef): Promise<void> {
    return this.collecting.run(sandbox.sandboxID, () => this.readOutput(sandbox))
  }

  /**
   * Samples and collects every sandbox the agent runs (paused ones: output only): one store
   * read for them all, and one write for all the samples.
   */
  async collectAll(): Promise<void> {
    const infos = await this.agent.list()
    const stored = await this.store.getSandboxes(infos.map((info) => info.sandboxID))
    for (const known of [this.cursors, this.cpuTimes]) {
      for (const sandboxID of known.keys()) if (!stored.has(sandboxID)) known.delete(sandboxID)
    }
    const samples: StoredMetricSample[] = []
    for (const info of infos) {
      const sandbox = stored.get(info.sandboxID)
      if (sandbox === undefined) continue
      const work = [this.collectOutput(sandbox)]
      if (info.state === 'running') {
        work.push(this.measure(sandbox).then((sample) => void (sample && samples.push(sample))))
      }
      for (const result of await Promise.allSettled(work)) {
        if (result.status === 'rejected') {
          this.logger.warn({ err: result.reason, sandboxID: sandbox.sandboxID }, 'telemetry failed')
        }
      }
    }
    await this.store.appendMetrics(samples)
  }

  /** Forgets log entries and samples past the retention period, of every sandbox. */
  async prune(now: Date): Promise<void> {
    const before = new Date(now.getTime() - RETENTION_MS)
    const pruned = await this.store.pruneTelemetry(before)
    if (pruned.logs + pruned.metrics > 0)
      this.logger.info({ ...pruned, before }, 'telemetry pruned')
  }

  private async measure(sandbox: SandboxRef): Promise<StoredMetricSample | undefined> {
    const { teamID, sandboxID } = sandbox
    const usage = await this.agent.usage(sandboxID)
    if (usage === undefined) return undefined
    const { cpuTimeUs, startedAt, ...figures } = usage
    const now = { cpuTimeUs, at: Date.now() }
    // The first sample measures since the sandbox's processes started (a pooled one's boot
    // included), as envd's own figure did.
    const before = this.cpuTimes.get(sandboxID) ?? { cpuTimeUs: 0, at: startedAt.getTime() }
    this.cpuTimes.set(sandboxID, now)
    const cpuUsedPct = cpuUsedPercent(before, now, usage.cpuCount)
    // In whole seconds, as envd's samples are (§3.3 `ts`) and the metrics routes' ranges.
    const timestamp = new Date(Math.floor(now.at / 1000) * 1000)
    return { teamID, sandboxID, sample: { timestamp, cpuUsedPct, ...figures } }
  }

  private async readOutput(sandbox: SandboxRef): Promise<void> {
    const { sandboxID } = sandbox
    const from = this.cursors.get(sandboxID) ?? (await this.store.outputBytesRead(sandboxID))
    this.cursors.set(sandboxID, from)
    const output = await this.agent.readOutput(sandboxID, from).catch((error: unknown) => {
      if (error instanceof SandboxNotFoundError) return undefined
      throw error
    })
    if (output === undefined || output.bytesRead === from) return
    const window = { startedAt: sandbox.startedAt, receivedAt: new Date() }
    const entries = output.lines.map((line) => logEntryFromOutputLine(line, window))
    await this.store.appendOutput(sandbox.teamID, sandboxID, entries, output.bytesRead)
    this.cursors.set(sandboxID, output.bytesRead)
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
