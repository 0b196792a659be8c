import type { BuildFailure, BuildResult, LogLevel } from '../store/index.js'

/** One step of a recipe as the SDK sends it (wire contract §1.3 `TemplateStep`). */
export interface BuildStep {
  type: string
  args: string[]
  filesHash?: string
  force: boolean
}

/** Registry credentials for `fromImage` (§1.3 `FromImageRegistry`); held in memory only. */
export type RegistryAuth =
  | { type: 'registry'; username: string; password: string }
  | { type: 'aws'; awsAccessKeyId: string; awsSecretAccessKey: string; awsRegion: string }
  | { type: 'gcp'; serviceAccountJson: string }

/**
 * Where a build starts. `image`: an OCI/Docker image reference (`e2bdev/base` is Sandbar's own
 * Debian recipe, so the SDK's default works without Docker Hub). `template`: the ready build
 * of another template, resolved by the api.
 */
export type BuildBase =
  | { kind: 'image'; image: string; registry?: RegistryAuth }
  | { kind: 'template'; name: string; build: BuildResult }

/** A build to run (§1.3 `TemplateBuildStartV2`, resolved and validated by the api). */
export interface BuildRequest {
  teamID: string
  templateID: string
  buildID: string
  base: BuildBase
  /** Ignore every cached layer (`force` of the whole template). */
  force: boolean
  steps: BuildStep[]
  startCmd?: string
  readyCmd?: string
  cpuCount: number
  memoryMB: number
  diskSizeMB: number
  /**
   * §1.4: SDKs older than 2.3.0 build `v2.0.0` templates, which have no implicit `USER user`
   * phase after the base; newer ones `v2.1.0`.
   */
  version: 'v2.0.0' | 'v2.1.0'
}

/** One line of build output as the SDK shows it (§1.3 `BuildLogEntry`). */
export interface BuildLogLine {
  level: LogLevel
  message: string
  step?: string
}

/** Where a build reports: the api stores status and logs for the SDK to poll. */
export interface BuildReporter {
  log(line: BuildLogLine): void
  /** The build left the queue and runs. */
  started(): Promise<void>
  ready(result: BuildResult): Promise<void>
  failed(failure: BuildFailure): Promise<void>
}

/** The archives `COPY` steps use, uploaded by clients (§2.3), kept per template. */
export interface TemplateFiles {
  has(templateID: string, hash: string): Promise<boolean>
  /** The archive's bytes; throws when it was never uploaded. */
  read(templateID: string, hash: string): Promise<Buffer>
  /** Stores the archive; refuses a body whose length differs from `length`. */
  write(
    templateID: string,
    hash: string,
    body: AsyncIterable<Uint8Array>,
    length: number,
  ): Promise<void>
  /** Forgets a deleted template's archives. */
  removeTemplate(templateID: string): Promise<void>
}

/** The builder role (DESIGN.md): build requests in, layers in the agent's layer store out. */
export interface Builder {
  /** Queues the build (fairly between teams, at most the concurrency limit at once). */
  submit(request: BuildRequest, reporter: BuildReporter): void
  /** Stops a queued or running build; its reporter hears `failed` with `reason`. */
  cancel(buildID: string, reason: string): void
  /** Builds queued or running for the team: the api's build concurrency limit (429). */
  activeBuilds(teamID: string): number
  readonly files: TemplateFiles
  /** Cancels what runs and waits for it to stop. */
  close(): Promise<void>
}

export { DEBIAN_BASE_IMAGES } from './base/debian-base.js'
export { type BuilderConfig, createBuilder } from './create-builder.js'
/** Layer IDs by kind, for the api's snapshots to name their layers as builds do. */
export { layerID, SNAPSHOT_LAYER_KIND } from './layer-ids.js'
export { createTemplateFiles, TemplateFileLengthError } from './template-files.js'
