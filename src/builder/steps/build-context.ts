/** What a step sees and changes: the build's current user, workdir and env (§2.2). */
export interface BuildContext {
  user: string
  workdir: string | undefined
  env: Record<string, string>
}

/** The build sandbox, as steps use it. */
export interface StepSandbox {
  /** Runs argv as `user` in `cwd` with `envs`; output lines go to onOutput; resolves with the exit code. */
  run(
    argv: string[],
    options: {
      user: string
      cwd?: string
      envs?: Record<string, string>
      onOutput?: (line: string, stream: 'stdout' | 'stderr') => void
    },
  ): Promise<number>
  /** Writes a file into the sandbox as root (mode 0600), e.g. an uploaded COPY archive. */
  upload(path: string, data: Buffer): Promise<void>
}
