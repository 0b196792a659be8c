import type { SetprivPrefix } from './setpriv-prefix.js'

/**
 * The shell preamble every user process runs before `exec`-ing its command. It raises the
 * process's own OOM score so the kernel kills user processes before envd (wire contract §3.5);
 * raising the score needs no privilege, so it runs after the credentials are dropped. A
 * failure (a read-only `/proc`) is silenced: the command must still run.
 */
export const PROCESS_PREAMBLE = '{ echo 100 > /proc/$$/oom_score_adj; } 2>/dev/null; exec "$@"'

/** The numeric identity a user process runs with. */
export interface SpawnCredentials {
  uid: number
  gid: number
  /** Supplementary group IDs; an empty list means none. */
  groups: readonly number[]
}

export interface SpawnCommandInput {
  /** How `setpriv` is started: its path, or a loader and its arguments before it. */
  setpriv: SetprivPrefix
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
 * The argv that runs `cmd args…` as the given user. envd spawns it as root; `setpriv` then
 * drops to the user's uid, gid and supplementary groups, which neither Node's `spawn` (it
 * keeps no supplementary groups) nor node-pty (it keeps root's) can do. `cmd` and `args` travel
 * as positional parameters of a fixed script, never interpolated into it.
 */
export function spawnCommand(input: SpawnCommandInput): SpawnCommand {
  const { uid, gid, groups } = input.credentials
  const [file, ...prefixArgs] = input.setpriv
  return {
    file,
    args: [
      ...prefixArgs,
      // Real and effective uid (and saved, as setpriv sets all three): the user, not root.
      `--reuid=${uid}`,
      // Real and effective gid: the user's primary group.
      `--regid=${gid}`,
      // Supplementary groups from /etc/group; `--clear-groups` so none of root's survive.
      groups.length > 0 ? `--groups=${groups.join(',')}` : '--clear-groups',
      // Ends setpriv's options: whatever follows is the program and its arguments.
      '--',
      '/bin/sh',
      '-c',
      PROCESS_PREAMBLE,
      // $0 of the script; "$@" is then exactly cmd and its args.
      'sh',
      input.cmd,
      ...input.args,
    ],
  }
}
