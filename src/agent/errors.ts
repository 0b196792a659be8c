/** A host tool (crun, ip, nft, mount, mmdebstrap…) failed; carries what it said. */
export class AgentError extends Error {
  constructor(
    message: string,
    readonly command: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(stderr.trim() === '' ? message : `${message}: ${stderr.trim()}`)
  }
}

/** No sandbox with this ID on this agent. */
export class SandboxNotFoundError extends Error {
  constructor(readonly sandboxID: string) {
    super(`sandbox '${sandboxID}' not found`)
  }
}

/** The template is not known to this agent. */
export class TemplateNotFoundError extends Error {
  constructor(readonly templateID: string) {
    super(`template '${templateID}' not found`)
  }
}

/** The operation does not fit the sandbox's state (pausing a paused sandbox, say). */
export class SandboxStateError extends Error {
  constructor(
    readonly sandboxID: string,
    readonly state: string,
    operation: string,
  ) {
    super(`sandbox '${sandboxID}' cannot ${operation} while ${state}`)
  }
}

/** A sandbox's volume mounts cannot be made as asked (a reserved or repeated path, say). */
export class VolumeMountError extends Error {}
