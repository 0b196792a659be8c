import { mkdir, readdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import type { Agent } from '../agent/index.js'
import type { Logger } from '../logger.js'
import { isProcessRunning, pidInName } from '../process-alive.js'
import { FairQueue } from './build-queue.js'
import { IMAGE_PULL_PREFIX } from './image/image-pull.js'
import type { Builder, BuildReporter, BuildRequest, TemplateFiles } from './index.js'
import { runBuild } from './run-build.js'
import { createTemplateFiles } from './template-files.js'

export interface BuilderConfig {
  agent: Agent
  /** Where clients' COPY archives are kept, per template. */
  filesDir: string
  /**
   * Scratch space for image pulls and the image configs kept beside their layers: on the
   * layer store's filesystem, so a pulled tree moves into its layer by rename.
   */
  workDir: string
  /**
   * Builds running at once; more wait their turn, team by team. Each holds a build sandbox of
   * the template's size, so the default suits a small host.
   */
  concurrency?: number
  /**
   * A PEM bundle of certificate authorities for build steps' TLS clients, for hosts whose
   * traffic passes a TLS-intercepting proxy (`sandbar serve --build-ca-file`).
   */
  caFile?: string | undefined
  logger: Logger
}

/** A build that is queued or running, and how to stop it. */
interface ActiveBuild {
  teamID: string
  abort: AbortController
  reporter: BuildReporter
  started: boolean
}

/** Starts the builder role: build requests in, layers in the agent's layer store out. */
export async function createBuilder(config: BuilderConfig): Promise<Builder> {
  await mkdir(config.workDir, { recursive: true, mode: 0o700 })
  await removeInterruptedPulls(config.workDir)
  const caBundle = config.caFile === undefined ? undefined : await readFile(config.caFile)
  return new HostBuilder(config, createTemplateFiles(config.filesDir), config.workDir, caBundle)
}

class HostBuilder implements Builder {
  private readonly queue: FairQueue
  private readonly active = new Map<string, ActiveBuild>()
  private readonly running = new Set<Promise<void>>()

  constructor(
    private readonly config: BuilderConfig,
    readonly files: TemplateFiles,
    private readonly workDir: string,
    private readonly caBundle: Buffer | undefined,
  ) {
    this.queue = new FairQueue(config.concurrency ?? 2)
  }

  submit(request: BuildRequest, reporter: BuildReporter): void {
    const build: ActiveBuild = {
      teamID: request.teamID,
      abort: new AbortController(),
      reporter,
      started: false,
    }
    this.active.set(request.buildID, build)
    const logger = this.config.logger.child({
      templateID: request.templateID,
      buildID: request.buildID,
    })
    this.queue.push({
      id: request.buildID,
      teamID: request.teamID,
      run: async () => {
        build.started = true
        const started = performance.now()
        const tools = {
          agent: this.config.agent,
          files: this.files,
          workDir: this.workDir,
          caBundle: this.caBundle,
          logger,
        }
        const running = runBuild(request, reporter, tools, build.abort.signal).finally(() => {
          this.active.delete(request.buildID)
          this.running.delete(running)
          logger.info({ durationMs: Math.round(performance.now() - started) }, 'build finished')
        })
        this.running.add(running)
        await running
      },
    })
  }

  cancel(buildID: string, reason: string): void {
    const build = this.active.get(buildID)
    if (build === undefined) return
    if (!build.started && this.queue.remove(buildID)) {
      this.active.delete(buildID)
      void build.reporter.failed({ message: reason })
      return
    }
    build.abort.abort(reason)
  }

  activeBuilds(teamID: string): number {
    return this.queue.count(teamID)
  }

  async close(): Promise<void> {
    for (const buildID of [...this.active.keys()]) this.cancel(buildID, 'Sandbar is shutting down')
    await Promise.allSettled([...this.running])
  }
}

/** Removes what pulls cut short by a crash left (their process is gone); live ones stay. */
async function removeInterruptedPulls(workDir: string): Promise<void> {
  for (const name of await readdir(workDir)) {
    const pid = pidInName(name, IMAGE_PULL_PREFIX)
    if (pid === undefined || isProcessRunning(pid)) continue
    await rm(path.join(workDir, name), { recursive: true, force: true })
  }
}
