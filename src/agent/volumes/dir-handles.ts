import { constants } from 'node:fs'
import { type FileHandle, lstat, open } from 'node:fs/promises'
import { errnoCode } from '../../errno-code.js'
import { MAX_NAME_BYTES, volumePathErrors } from './volume-errors.js'

const { O_RDONLY, O_WRONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants

/**
 * Opens a directory without following a symlink in its place: `O_NOFOLLOW` refuses a symlink
 * as the last component, `O_DIRECTORY` anything else that is not a directory.
 */
export const DIRECTORY_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW

/**
 * Opens an entry to read or change it, never through a symlink. `O_NONBLOCK`: a FIFO a sandbox
 * put where a file was expected opens at once instead of holding a thread until a writer
 * comes; callers then refuse what is not a regular file or directory by its `fstat`.
 */
export const ENTRY_READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY

/** Opens a file to write, never through a symlink; a FIFO without a reader fails (ENXIO). */
export const ENTRY_WRITE_FLAGS = O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY

/**
 * `name` inside the open directory `dir`, as a path the kernel resolves from the descriptor
 * itself (Node has no `openat`): `/proc/self/fd/<fd>` is the directory that was opened,
 * wherever it has been moved since, so a directory swapped for a symlink between two calls
 * changes nothing here. `name` is one component: never empty, `.`, `..` or holding `/`.
 */
export function at(dir: FileHandle, name: string): string {
  if (name === '' || name === '.' || name === '..' || name.includes('/')) {
    throw new RangeError(`not a single path component: '${name}'`)
  }
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) throw volumePathErrors.nameTooLong(name)
  return `${handlePath(dir)}/${name}`
}

/** The open directory itself, for calls that take a path (readdir, statfs). */
export function handlePath(dir: FileHandle): string {
  return `/proc/self/fd/${dir.fd}`
}

/**
 * Opens the directory `name` inside `dir`. A missing one is `notFound`; a symlink is refused
 * as `symlink`, anything else as `notDirectory` (`text` is the path the messages name).
 */
export async function openChildDirectory(
  dir: FileHandle,
  name: string,
  text: string,
): Promise<FileHandle> {
  try {
    return await open(at(dir, name), DIRECTORY_FLAGS)
  } catch (error) {
    const code = errnoCode(error)
    if (code === 'ENOENT') throw volumePathErrors.notFound(text)
    if (code === 'ENOTDIR' || code === 'ELOOP') throw await notADirectory(dir, name, text)
    throw error
  }
}

/** Opens the entry `name` inside `dir` to read it or change its attributes. */
export async function openChildEntry(
  dir: FileHandle,
  name: string,
  text: string,
): Promise<FileHandle> {
  try {
    return await open(at(dir, name), ENTRY_READ_FLAGS)
  } catch (error) {
    const code = errnoCode(error)
    if (code === 'ENOENT') throw volumePathErrors.notFound(text)
    if (code === 'ELOOP') throw volumePathErrors.symlink(text)
    // A socket, or a device node on the nodev mount.
    if (code === 'ENXIO' || code === 'EACCES') throw volumePathErrors.wrongType(text, 'a file')
    throw error
  }
}

/** Which refusal a non-directory is: the message only, the refusal stands either way. */
async function notADirectory(dir: FileHandle, name: string, text: string): Promise<Error> {
  const stats = await lstat(at(dir, name)).catch(() => undefined)
  return stats?.isSymbolicLink() === true
    ? volumePathErrors.symlink(text)
    : volumePathErrors.notDirectory(text)
}
