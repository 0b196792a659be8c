import { type FileHandle, lstat, open, readdir, rmdir, unlink } from 'node:fs/promises'
import { errnoCode } from '../../errno-code.js'
import { at, DIRECTORY_FLAGS, handlePath } from './dir-handles.js'
import { childPath } from './volume-entry.js'
import { volumePathErrors } from './volume-errors.js'

/**
 * How deep a removal walks. Each level holds one open directory, so a tree a sandbox nested
 * a million deep is refused rather than allowed to take every descriptor of the service.
 */
export const MAX_REMOVE_DEPTH = 512

/**
 * How often a directory is read again while entries keep appearing in it (a sandbox writing
 * while the client removes): the removal gives up with `busy` after that.
 */
const ROUNDS = 8

/**
 * Removes `name` inside `dir`, and everything below it when it is a directory. Every step is
 * relative to an open directory: unlink and rmdir never follow a symlink, and a directory is
 * entered only by opening it with O_NOFOLLOW, so a symlink swapped in for a directory during
 * the walk is unlinked as the link it is, never followed out of the volume.
 */
export async function removeTree(dir: FileHandle, name: string, text: string): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    try {
      await lstat(at(dir, name))
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return
      throw error
    }
    await removeEntry(dir, name, text, 0)
  }
  throw volumePathErrors.busy(text)
}

/** One attempt; an entry that changed under it is left for the caller's next round. */
async function removeEntry(
  dir: FileHandle,
  name: string,
  text: string,
  depth: number,
): Promise<void> {
  try {
    await unlink(at(dir, name))
    return
  } catch (error) {
    const code = errnoCode(error)
    if (code === 'ENOENT') return
    if (code !== 'EISDIR') throw error
  }
  if (depth >= MAX_REMOVE_DEPTH) throw volumePathErrors.tooDeep(text, MAX_REMOVE_DEPTH)
  let child: FileHandle
  try {
    child = await open(at(dir, name), DIRECTORY_FLAGS)
  } catch (error) {
    // Gone or swapped for a non-directory since the unlink: the next round sees what it is.
    const code = errnoCode(error)
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') return
    throw error
  }
  try {
    await emptyDirectory(child, text, depth + 1)
  } finally {
    await child.close()
  }
  try {
    await rmdir(at(dir, name))
  } catch (error) {
    const code = errnoCode(error)
    if (code !== 'ENOENT' && code !== 'ENOTEMPTY' && code !== 'ENOTDIR') throw error
  }
}

async function emptyDirectory(dir: FileHandle, text: string, depth: number): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    const names = await readdir(handlePath(dir))
    if (names.length === 0) return
    for (const name of names) await removeEntry(dir, name, childPath(text, name), depth)
  }
  throw volumePathErrors.busy(text)
}
