import path from 'node:path'

/** util-linux `setpriv` where envd runs on a host, or in a rootfs that ships it. */
export const HOST_SETPRIV = '/usr/bin/setpriv'

/**
 * The argv that starts `setpriv`, before its own options: a program, then any arguments of a
 * loader in front of it. Resolved once when envd starts.
 */
export type SetprivPrefix = readonly [file: string, ...args: string[]]

/**
 * Where envd's `setpriv` comes from. With `SANDBAR_TOOLBOX=<dir>`, envd runs from a read-only
 * toolbox mounted into a rootfs whose libc may differ from the toolbox's, so `setpriv` starts
 * through the toolbox's own loader with the toolbox's libraries (host facts, "Running the
 * in-sandbox agent on any rootfs"). `--library-path` reaches that loader only: `setpriv` then
 * execs the user's `/bin/sh` with the rootfs's loader and libc, and no `LD_LIBRARY_PATH` reaches
 * a user process. Without a toolbox, the host's `setpriv`.
 */
export function setprivPrefix(toolbox: string | undefined): SetprivPrefix {
  if (toolbox === undefined || toolbox === '') return [HOST_SETPRIV]
  // User processes start in their own cwd, where a relative toolbox path means something else.
  if (!path.isAbsolute(toolbox)) {
    throw new Error(`SANDBAR_TOOLBOX must be an absolute path, got '${toolbox}'`)
  }
  const lib = path.join(toolbox, 'lib')
  return [
    path.join(lib, 'ld-linux-x86-64.so.2'),
    '--library-path',
    lib,
    path.join(toolbox, 'bin/setpriv'),
  ]
}
