/** What a step sees and changes: the build's current user, workdir and env (§2.2). */
export interface BuildContext {
  user: string
  /** Absolute; unset until a WORKDIR step, when processes start in the user's home. */
  workdir: string | undefined
  env: Record<string, string>
}

export type OutputStream = 'stdout' | 'stderr'

/** The build sandbox, as steps use it. */
export interface StepSandbox {
  /** Runs argv as `user` in `cwd` with `envs`; output lines go to onOutput; resolves with the exit code. */
  run(
    argv: string[],
    options: {
      user: string
      cwd?: string
      envs?: Record<string, string>
      onOutput?: (line: string, stream: OutputStream) => void
    },
  ): Promise<number>
  /** Writes a file into the sandbox as root (mode 0600), e.g. an uploaded COPY archive. */
  upload(path: string, data: Buffer): Promise<void>
}

/** The archives COPY steps use (§2.3), by files hash: gzip tarballs as the SDK uploads them. */
export interface StepFiles {
  read(hash: string): Promise<Buffer>
}

/** Everything a step acts through. */
export interface StepTools {
  sandbox: StepSandbox
  files: StepFiles
  /** Output of the user's own commands (RUN), for the build log. */
  onOutput?: (line: string, stream: OutputStream) => void
}
