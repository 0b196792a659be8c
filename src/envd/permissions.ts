import type { OsUser } from './users.js'

export type AccessKind = 'read' | 'write' | 'execute'

const bitsFor: Record<AccessKind, number> = { read: 4, write: 2, execute: 1 }

/**
 * Whether `user` may access an inode with these owner and mode bits, by the classic
 * owner / group / other rule. envd runs as root and acts for the selected user, so it
 * applies the check the kernel would apply to that user. Root may do anything.
 */
export function mayAccess(
  inode: { mode: number; uid: number; gid: number },
  user: Pick<OsUser, 'uid' | 'groups'>,
  kind: AccessKind,
): boolean {
  if (user.uid === 0) return true
  const bit = bitsFor[kind]
  if (inode.uid === user.uid) return ((inode.mode >> 6) & bit) !== 0
  if (user.groups.includes(inode.gid)) return ((inode.mode >> 3) & bit) !== 0
  return (inode.mode & bit) !== 0
}
