import type { BuildLogLine, BuildReporter } from '../builder/index.js'
import type { Logger } from '../logger.js'
import type {
  BuildFailure,
  BuildLogEntry,
  BuildResult,
  TemplateBuild,
  TemplateStore,
} from '../store/index.js'

/** How long log lines wait to be written together: the SDK polls every 200 ms (§2.1). */
const FLUSH_INTERVAL_MS = 100
const UNFINISHED: TemplateBuild['status'][] = ['waiting', 'building']

/** How a build ended, as its reporter saw it. */
export type BuildOutcome = { status: 'ready' } | { status: 'error'; failure: BuildFailure }

/**
 * Where the builder reports one build (§2.4): status transitions, result and failure go to the
 * store for the SDK's status polls, log lines in batches, and progress to the service's log
 * with the build's `templateID`, `buildID`, `step` and durations: start, ready and failure at
 * info, each step's span at debug (the builder logs its steps' outcomes at info already).
 */
export class StoreBuildReporter implements BuildReporter {
  private pending: BuildLogEntry[] = []
  private timer: NodeJS.Timeout | undefined
  /** Writes run one after another, so log lines land in the order they were reported. */
  private writes: Promise<void> = Promise.resolve()
  private readonly log_: Logger
  private readonly registeredAt = Date.now()
  private startedAt: number | undefined
  private step: { name: string; since: number } | undefined
  private settle!: (outcome: BuildOutcome) => void
  /** Resolves once the build is ready or failed and everything is written; never rejects. */
  readonly outcome: Promise<BuildOutcome>

  constructor(
    private readonly store: TemplateStore,
    private readonly build: Pick<TemplateBuild, 'templateID' | 'buildID' | 'tags'>,
    logger: Logger,
  ) {
    this.log_ = logger.child({ templateID: build.templateID, buildID: build.buildID })
    this.outcome = new Promise((resolve) => {
      this.settle = resolve
    })
  }

  log(line: BuildLogLine): void {
    const timestamp = new Date()
    this.pending.push({ timestamp, ...line })
    if (line.step !== undefined && line.step !== this.step?.name) {
      this.endStep(timestamp.getTime())
      this.step = { name: line.step, since: timestamp.getTime() }
      this.log_.debug({ step: line.step }, 'build step started')
    }
    this.log_.debug({ step: line.step, level: line.level }, line.message)
    this.timer ??= setTimeout(() => {
      this.timer = undefined
      void this.flush()
    }, FLUSH_INTERVAL_MS)
  }

  async started(): Promise<void> {
    this.startedAt = Date.now()
    await this.update({ status: 'building', updatedAt: new Date() })
    // The duration is the time the build waited in the queue.
    this.log_.info({ durationMs: this.startedAt - this.registeredAt }, 'build left the queue')
  }

  async ready(result: BuildResult): Promise<void> {
    await this.finish()
    const now = new Date()
    const updated = await this.update({ status: 'ready', result, updatedAt: now, finishedAt: now })
    // A build cancelled meanwhile stays failed, and takes no tags.
    if (updated !== undefined)
      await this.store.assignTags(this.build.templateID, this.build.tags, this.build.buildID)
    this.log_.info({ durationMs: this.duration(), tags: this.build.tags }, 'build ready')
    this.settle({ status: 'ready' })
  }

  async failed(failure: BuildFailure): Promise<void> {
    await this.finish()
    const now = new Date()
    await this.update({ status: 'error', failure, updatedAt: now, finishedAt: now })
    this.log_.warn(
      { durationMs: this.duration(), step: failure.step, reason: failure.message },
      'build failed',
    )
    this.settle({ status: 'error', failure })
  }

  private update(patch: Parameters<TemplateStore['updateBuild']>[1]) {
    return this.store.updateBuild(this.build.buildID, patch, UNFINISHED)
  }

  /** Writes what is pending now; a failed write is logged, and the build goes on. */
  private flush(): Promise<void> {
    const entries = this.pending
    this.pending = []
    if (entries.length > 0) {
      this.writes = this.writes.then(() =>
        this.store.appendBuildLogs(this.build.buildID, entries).catch((error: unknown) => {
          this.log_.error({ err: error }, 'writing build logs failed')
        }),
      )
    }
    return this.writes
  }

  private async finish(): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    this.endStep(Date.now())
    await this.flush()
  }

  private endStep(now: number): void {
    if (this.step === undefined) return
    this.log_.debug(
      { step: this.step.name, durationMs: now - this.step.since },
      'build step finished',
    )
    this.step = undefined
  }

  private duration(): number {
    return Date.now() - (this.startedAt ?? this.registeredAt)
  }
}
