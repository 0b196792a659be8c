import { readFileSync } from 'node:fs'
import { fileVersion } from '../file-version.js'

/** An account from the sandbox's own `/etc/passwd` and `/etc/group`. */
export interface OsUser {
  name: string
  uid: number
  gid: number
  /** Supplementary group IDs, from `/etc/group` membership lists. */
  groups: number[]
  home: string
}

export class UnknownUserError extends Error {
  constructor(readonly username: string) {
    super(`user '${username}' does not exist`)
  }
}

interface AccountDb {
  users: Map<string, OsUser>
  userNames: Map<number, string>
  groupNames: Map<number, string>
}

/**
 * Reads the account files, parsed anew whenever either has changed: templates and user
 * commands add accounts at any time (`useradd` in a build step, or `chpasswd` rewriting one in
 * place). Synchronously: two small reads take microseconds, where each asynchronous one is
 * four thread-pool round trips on every request's path.
 */
function readAccounts(root: string): AccountDb {
  const passwd = readOptional(`${root}/etc/passwd`)
  const group = readOptional(`${root}/etc/group`)
  const members = new Map<string, number[]>()
  const groupNames = new Map<number, string>()
  for (const fields of colonRecords(group)) {
    const [name, , gidText, memberList] = fields
    const gid = Number(gidText)
    if (!name || !Number.isInteger(gid)) continue
    if (!groupNames.has(gid)) groupNames.set(gid, name)
    for (const member of (memberList ?? '').split(',').filter(Boolean)) {
      members.set(member, [...(members.get(member) ?? []), gid])
    }
  }
  const users = new Map<string, OsUser>()
  const userNames = new Map<number, string>()
  for (const fields of colonRecords(passwd)) {
    const [name, , uidText, gidText, , home] = fields
    const uid = Number(uidText)
    const gid = Number(gidText)
    if (!name || !Number.isInteger(uid) || !Number.isInteger(gid)) continue
    if (!userNames.has(uid)) userNames.set(uid, name)
    const groups = [...new Set([gid, ...(members.get(name) ?? [])])]
    users.set(name, { name, uid, gid, groups, home: home || '/' })
  }
  return { users, userNames, groupNames }
}

function readOptional(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return ''
  }
}

function colonRecords(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => line.split(':'))
}

/** Looks up accounts in a root filesystem (`/` inside a sandbox). */
export class UserDirectory {
  /** The files as last parsed: every request names a user, and they rarely change. */
  private parsed: { version: string; accounts: AccountDb } | undefined

  constructor(private readonly root = '') {}

  private accounts(): AccountDb {
    const version = [`${this.root}/etc/passwd`, `${this.root}/etc/group`]
      .map((file) => fileVersion(file) ?? '-')
      .join(' ')
    if (this.parsed?.version !== version) {
      this.parsed = { version, accounts: readAccounts(this.root) }
    }
    return this.parsed.accounts
  }

  /** @throws UnknownUserError when the name is not in `/etc/passwd`. */
  async lookup(username: string): Promise<OsUser> {
    const user = this.accounts().users.get(username)
    if (user) return user
    // uid 0 exists whatever the image's files say: an image may ship no /etc/passwd at all
    // (a scratch or distroless base), and its build steps still run as root.
    if (username === 'root') return { name: 'root', uid: 0, gid: 0, groups: [0], home: '/root' }
    throw new UnknownUserError(username)
  }

  /** Owner and group names for display, with the numeric ID as fallback (as `ls -l` does). */
  async names(): Promise<{ user(uid: number): string; group(gid: number): string }> {
    const db = this.accounts()
    return {
      user: (uid) => db.userNames.get(uid) ?? String(uid),
      group: (gid) => db.groupNames.get(gid) ?? String(gid),
    }
  }
}
