import bindings from 'bindings'
import type { OsUser } from '../users.js'

/** The credentials a stretch of filesystem calls runs with. */
export type Credentials = Pick<OsUser, 'uid' | 'gid' | 'groups'>

interface ThreadCredentialsAddon {
  /** Sets the calling thread's effective uid and gid and its groups (thread-credentials.c). */
  setThreadCredentials(uid: number, gid: number, groups: readonly number[]): void
}

/**
 * How to switch, when envd runs as root on POSIX, with envd's own gid and groups to restore.
 * Only root loads the addon: a plain-user envd never switches.
 */
const switcher = (() => {
  if (process.geteuid?.() !== 0) return undefined
  const addon: ThreadCredentialsAddon = bindings('thread_credentials.node')
  return {
    set: addon.setThreadCredentials,
    gid: process.getegid?.() ?? 0,
    groups: process.getgroups?.() ?? [],
  }
})()

/**
 * Runs `work`, a stretch of synchronous filesystem calls, with `user`'s effective uid, gid and
 * supplementary groups, then switches back. The kernel then checks each call as it would for
 * that user: search permission on every directory of a path, symlinks resolved as the user,
 * ACLs, and nothing between a check and its use. What `work` opens stays usable afterwards:
 * reads and writes through a descriptor are not checked again, so data streams as root.
 *
 * The switch is the main thread's alone (thread-credentials.c): the thread pool keeps root,
 * and what it does meanwhile (moving bytes through open descriptors, reading world-readable
 * `/proc` and `/etc` files) is unaffected. Synchronous by necessity: a switch must not span
 * an `await`, after which the main thread would run other requests' code as this user; envd
 * therefore makes every path-based filesystem call synchronously. Root requests, and an envd
 * that is not root (`sandbar envd` as a plain user, which can only ever act as itself), run
 * `work` unchanged.
 */
export function asUser<T>(user: Credentials, work: () => T): T {
  if (user.uid === 0 || switcher === undefined) return work()
  try {
    switcher.set(user.uid, user.gid, user.groups)
    return work()
  } finally {
    switcher.set(0, switcher.gid, switcher.groups)
  }
}

/** Whether `asUser` switches credentials for `user`: envd is root and `user` is not. */
export function switchesFor(user: Credentials): boolean {
  return user.uid !== 0 && switcher !== undefined
}
