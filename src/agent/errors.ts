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
