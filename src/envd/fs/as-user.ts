import type { OsUser } from '../users.js'

/** The credentials a stretch of filesystem calls runs with. */
export type Credentials = Pick<OsUser, 'uid' | 'gid' | 'groups'>

/**
 * How to switch, when envd runs as root on POSIX, with envd's own gid and groups to restore.
 * The calls are Node's own wrappers, which do not depend on `this`.
 */
const switcher = (() => {
  const { seteuid, setegid, setgroups, getegid, getgroups } = process
  if (process.geteuid?.() !== 0 || !seteuid || !setegid || !setgroups) return undefined
  return { seteuid, setegid, setgroups, gid: getegid?.() ?? 0, groups: getgroups?.() ?? [] }
})()

/**
 * Runs `work`, a stretch of synchronous filesystem calls, with `user`'s effective uid, gid and
 * supplementary groups, then switches back. The kernel then checks each call as it would for
 * that user: search permission on every directory of a path, symlinks resolved as the user,
 * ACLs, and nothing between a check and its use. What `work` opens stays usable afterwards:
 * reads and writes through a descriptor are not checked again, so data streams as root.
 *
 * Synchronous by necessity: credentials are per process for Node (glibc applies `seteuid` to
 * every thread), so a switch must not span an `await`, and no libuv thread may resolve a path
 * meanwhile. envd therefore makes every path-based filesystem call synchronously; the thread
 * pool only moves bytes through open descriptors (and reads world-readable `/proc` and
 * `/etc` files). Root requests, and an envd that is not root (`sandbar envd` as a plain user,
 * which can only ever act as itself), run `work` unchanged.
 */
export function asUser<T>(user: Credentials, work: () => T): T {
  if (user.uid === 0 || switcher === undefined) return work()
  try {
    // Groups and gid first: once the uid is the user's, envd may no longer change them.
    switcher.setgroups(user.groups)
    switcher.setegid(user.gid)
    switcher.seteuid(user.uid)
    return work()
  } finally {
    switcher.seteuid(0)
    switcher.setegid(switcher.gid)
    switcher.setgroups(switcher.groups)
  }
}

/** Whether `asUser` switches credentials for `user`: envd is root and `user` is not. */
export function switchesFor(user: Credentials): boolean {
  return user.uid !== 0 && switcher !== undefined
}
