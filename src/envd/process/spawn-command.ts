/** The numeric identity a user process runs with. */
export interface SpawnCredentials {
  uid: number
  gid: number
  /** Supplementary group IDs; an empty list means none. */
  groups: readonly number[]
}

export interface SpawnCommandInput {
  /** The run-as helper's path (run-as-path.ts). */
  runAs: string
  credentials: SpawnCredentials
  cmd: string
  args: readonly string[]
}

/** A program and its argv, for `child_process.spawn` or `node-pty` (no shell in between). */
export interface SpawnCommand {
  file: string
  args: string[]
}

/**
 * The argv that runs `cmd args…` as the given user. envd spawns it as root; run-as (run-as.c)
 * raises the process's OOM score (wire contract §3.5), drops to the user's uid, gid and
 * supplementary groups, which neither Node's `spawn` (it keeps no supplementary groups) nor
 * node-pty (it keeps root's) can do, and execs `cmd`. `cmd` and `args` travel as its own
 * arguments, never through a shell.
 */
export function spawnCommand(input: SpawnCommandInput): SpawnCommand {
  const { uid, gid, groups } = input.credentials
  return {
    file: input.runAs,
    args: [String(uid), String(gid), groups.join(','), '--', input.cmd, ...input.args],
  }
}
