/**
 * The read-only toolbox bind-mounted into every sandbox (host-facts: node, its libraries and
 * loader, the envd bundle and its run-as, tini), so templates need nothing installed for Sandbar.
 */
export interface Toolbox {
  /** Host directory. */
  dir: string
  /** Where it is mounted inside sandboxes. */
  mountPoint: string
  /** argv of the container's PID 1: tini, then envd through the toolbox's own loader. */
  initArgs(port: number): string[]
}
