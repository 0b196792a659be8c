import {
  closeSync,
  fchmodSync,
  fchownSync,
  constants as fsConstants,
  lstatSync,
  mkdirSync,
  openSync,
  unlinkSync,
} from 'node:fs'
import path from 'node:path'
import { errnoCode } from '../../errno-code.js'
import { type Credentials, switchesFor } from './as-user.js'
import { removeDirs } from './make-dirs.js'

/** Credentials that leave envd as root: `asUser` runs work with them unchanged. */
export const ROOT: Credentials = { uid: 0, gid: 0, groups: [] }

/** Opening a directory as root without following a symlink at its name. */
const DIRECTORY_NO_FOLLOW = fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW

/**
 * Whether a write `error` that the kernel returned to `user` may be retried as root, as E2B's
 * envd (which runs as root) would have done it: envd acts for `user` by switching credentials,
 * and the kernel denied the user (EACCES, EPERM). Root requests and an envd that is not root
 * have nothing to fall back to.
 */
export function mayCreateAsRoot(user: Credentials, error: unknown): boolean {
  const code = errnoCode(error)
  return switchesFor(user) && (code === 'EACCES' || code === 'EPERM')
}

/** A directory reached as root through descriptors, held open until `release()`. */
export interface HeldDirectory {
  /**
   * `name` inside the directory, as a path through envd's descriptor of it; `.` is the
   * directory itself, whatever its name in its parent has become meanwhile.
   */
  entry(name: string): string
  /** Directories created on the way, outermost first, as paths through their parents. */
  created: string[]
  /** Closes the descriptors (again: nothing); `entry` and `created` name nothing then. */
  release(): void
}

/**
 * `mkdir -p dir` as root, the way E2B's envd creates a request user's missing parents (each
 * new directory `0755` and given to `owner`), but without following any symlink: each existing
 * component is opened with `O_NOFOLLOW` and the next is looked up through that descriptor
 * (`/proc/self/fd/<fd>/<name>`), so nobody can redirect the walk after it has passed.
 * Every path-based call names a directory envd holds open; what it creates is handed over
 * through its own descriptor, never by a path that could have changed.
 * @returns undefined when a component is a symlink or not a directory: root then refuses.
 */
export function holdDirectory(dir: string, owner: Credentials): HeldDirectory | undefined {
  const fds = [openSync('/', DIRECTORY_NO_FOLLOW)]
  const created: string[] = []
  // Once only: a discard may follow a failed commit, and a closed number may be reused.
  const release = (): void => {
    for (const fd of fds.splice(0)) closeSync(fd)
  }
  try {
    for (const name of path.resolve(dir).split(path.sep).filter(Boolean)) {
      const entryPath = `/proc/self/fd/${fds[fds.length - 1]}/${name}`
      const existing = openOrUndefined(entryPath)
      if (existing !== undefined) {
        fds.push(existing)
        continue
      }
      mkdirSync(entryPath, { mode: 0o755 })
      created.push(entryPath)
      const fd = openSync(entryPath, DIRECTORY_NO_FOLLOW)
      fds.push(fd)
      fchownSync(fd, owner.uid, owner.gid)
    }
  } catch (error) {
    removeDirs(created)
    release()
    if (isRefusal(error)) return undefined
    throw error
  }
  const fd = fds[fds.length - 1]
  return { entry: (name) => `/proc/self/fd/${fd}/${name}`, created, release }
}

/**
 * Creates `name`, a new file, in `dir` as root and gives it to `owner`: `O_EXCL` and
 * `O_NOFOLLOW`, so an existing file or symlink there is never opened. Overwriting stays the
 * user's own business (their write permission on the file decides).
 * @returns the open descriptor, or undefined when something already has that name.
 */
export function createFile(
  dir: HeldDirectory,
  name: string,
  owner: Credentials,
  mode: number,
): number | undefined {
  let fd: number
  try {
    fd = openSync(
      dir.entry(name),
      fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW,
      0o600,
    )
  } catch (error) {
    if (isRefusal(error)) return undefined
    throw error
  }
  try {
    fchownSync(fd, owner.uid, owner.gid)
    // Set after the umask has had its say, and after the chown, which would drop set-id bits.
    fchmodSync(fd, mode)
  } catch (error) {
    closeSync(fd)
    unlinkSync(dir.entry(name))
    throw error
  }
  return fd
}

/** Whether an entry exists at `entryPath`, a symlink itself counting (no follow). */
export function entryExists(entryPath: string): boolean {
  try {
    lstatSync(entryPath)
    return true
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return false
    throw error
  }
}

function openOrUndefined(entryPath: string): number | undefined {
  try {
    return openSync(entryPath, DIRECTORY_NO_FOLLOW)
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined
    throw error
  }
}

/** A symlink (`ELOOP`), a non-directory on the way, or a name taken meanwhile. */
function isRefusal(error: unknown): boolean {
  const code = errnoCode(error)
  return code === 'ELOOP' || code === 'ENOTDIR' || code === 'EEXIST'
}
