import { constants } from 'node:fs'
import { type FileHandle, lstat, mkdir, open, readdir, readlink, unlink } from 'node:fs/promises'
import type { Readable } from 'node:stream'
import { errnoCode } from '../../errno-code.js'
import {
  at,
  DIRECTORY_FLAGS,
  ENTRY_WRITE_FLAGS,
  handlePath,
  openChildDirectory,
  openChildEntry,
} from './dir-handles.js'
import { removeTree } from './remove-tree.js'
import { childPath, type VolumeEntry, volumeEntry } from './volume-entry.js'
import { VolumePathError, volumePathErrors } from './volume-errors.js'
import { volumePathSegments, volumePathText } from './volume-path.js'

/** Owner and permission bits of an entry; an omitted one is left as it is (or defaulted). */
export interface EntryAttributes {
  uid?: number
  gid?: number
  mode?: number
}

/** How `makeDir` and `writeFile` create: `force` makes parents and accepts what exists. */
export interface CreateOptions extends EntryAttributes {
  force?: boolean
}

/**
 * What a new entry gets unless the request says (wave2-contracts §2.3, infra's orchestrator
 * volume service): directories 0777, files 0666, owner 9090:9090.
 */
export const VOLUME_ENTRY_DEFAULTS = { uid: 9090, gid: 9090, directoryMode: 0o777, fileMode: 0o666 }

/** A file opened for reading: its entry and its bytes from the start. */
export interface OpenedFile {
  entry: VolumeEntry
  /** Read as it is pulled; reading to the end or cancelling closes the file. */
  stream: ReadableStream<Uint8Array>
}

/** How much of a file one pull reads. */
const READ_CHUNK_BYTES = 256 * 1024

/**
 * The content of one volume, for the content API (wave2-contracts §2.3). The volume is written
 * by hostile sandboxes and this runs as host root, so no operation follows a symlink or `..`
 * out of it, even while a sandbox swaps entries between two steps: paths are split into
 * components (volume-path.ts), and each is opened relative to its already-open parent without
 * following symlinks (dir-handles.ts); reads, writes, chmod and chown then act on the opened
 * descriptor. Symlinks inside are listed with their target and never followed.
 */
export class VolumeFiles {
  /** `root` is the volume's mounted directory; `checkMounted` refuses an unmounted one. */
  constructor(
    private readonly root: string,
    private readonly checkMounted: (root: FileHandle) => Promise<void>,
  ) {}

  async stat(path: string): Promise<VolumeEntry> {
    const segments = volumePathSegments(path)
    return this.inParent(segments, undefined, async (parent, name, text) => {
      if (name === undefined) return volumeEntry(await parent.stat(), '/')
      return entryAt(parent, name, text)
    })
  }

  /** The entries below the directory, each directory followed by its own to `depth` levels. */
  async list(path: string, depth: number): Promise<VolumeEntry[]> {
    const segments = volumePathSegments(path)
    const dir = await this.walk(segments, undefined)
    try {
      const entries: VolumeEntry[] = []
      await listInto(dir, volumePathText(segments), depth, entries)
      return entries
    } finally {
      await dir.close()
    }
  }

  async makeDir(path: string, options: CreateOptions): Promise<VolumeEntry> {
    const segments = volumePathSegments(path)
    const attributes = directoryAttributes(options)
    return this.inParent(
      segments,
      options.force ? attributes : undefined,
      async (parent, name, text) => {
        if (name === undefined) {
          if (options.force !== true) throw volumePathErrors.exists(text)
          return volumeEntry(await parent.stat(), '/')
        }
        const made = await makeDirectory(parent, name)
        if (!made && options.force !== true) throw volumePathErrors.exists(text)
        const dir = await openChildDirectory(parent, name, text).catch((error: unknown) => {
          // Something other than a directory holds the name: it exists, as a file.
          throw error instanceof VolumePathError && !made ? volumePathErrors.exists(text) : error
        })
        try {
          if (made) await applyAttributes(dir, attributes)
          return volumeEntry(await dir.stat(), text)
        } finally {
          await dir.close()
        }
      },
    )
  }

  /** Opens a regular file to read; the caller ends the stream (which closes it). */
  async readFile(path: string): Promise<OpenedFile> {
    const segments = volumePathSegments(path)
    return this.inParent(segments, undefined, async (parent, name, text) => {
      if (name === undefined) throw volumePathErrors.wrongType(text, 'a file')
      const file = await openChildEntry(parent, name, text)
      try {
        const stats = await file.stat()
        if (!stats.isFile()) throw volumePathErrors.wrongType(text, 'a file')
        return { entry: volumeEntry(stats, text), stream: fileStream(file) }
      } catch (error) {
        await file.close()
        throw error
      }
    })
  }

  /**
   * Writes `body` to the file: without `force` an exclusive create (an existing entry is
   * `exists`), with it parents are made and an existing file is truncated and overwritten.
   * A new file takes the defaults for what `options` leaves out; an overwritten one keeps its
   * own. A full volume is `noSpace`, and a file this call created is removed again.
   */
  async writeFile(path: string, body: Readable, options: CreateOptions): Promise<VolumeEntry> {
    const segments = volumePathSegments(path)
    // Parents take the request's owner; its mode is the file's, so they get a directory's.
    const parents = options.force
      ? directoryAttributes({ uid: options.uid, gid: options.gid })
      : undefined
    return this.inParent(segments, parents, async (parent, name, text) => {
      if (name === undefined) throw volumePathErrors.wrongType(text, 'a file')
      const { file, created } = await openForWrite(parent, name, text, options.force === true)
      try {
        await applyAttributes(file, created ? fileAttributes(options) : options)
        if (!created) await file.truncate(0)
        await writeAll(file, body)
        return volumeEntry(await file.stat(), text)
      } catch (error) {
        if (created) await unlink(at(parent, name)).catch(() => undefined)
        throw errnoCode(error) === 'ENOSPC' ? volumePathErrors.noSpace(text) : error
      } finally {
        await file.close()
      }
    })
  }

  /** chmod, then chown (wave2-contracts §2.3 PATCH), on the entry itself, never a symlink's target. */
  async setAttributes(path: string, attributes: EntryAttributes): Promise<VolumeEntry> {
    const segments = volumePathSegments(path)
    return this.inParent(segments, undefined, async (parent, name, text) => {
      const entry = name === undefined ? parent : await openChildEntry(parent, name, text)
      try {
        await applyAttributes(entry, attributes)
        return volumeEntry(await entry.stat(), text)
      } finally {
        if (entry !== parent) await entry.close()
      }
    })
  }

  /** Removes the entry, a directory with everything below it; the root cannot go. */
  async remove(path: string): Promise<void> {
    const segments = volumePathSegments(path)
    await this.inParent(segments, undefined, async (parent, name, text) => {
      if (name === undefined) throw volumePathErrors.root()
      await lstat(at(parent, name)).catch((error: unknown) => {
        throw errnoCode(error) === 'ENOENT' ? volumePathErrors.notFound(text) : error
      })
      await removeTree(parent, name, text)
    })
  }

  /**
   * Runs `use` with the open parent directory of `segments` and the last segment's name (with
   * no name for the root, whose "parent" is the root itself). `makeParents` creates missing
   * parents with those attributes.
   */
  private async inParent<T>(
    segments: string[],
    makeParents: Required<EntryAttributes> | undefined,
    use: (parent: FileHandle, name: string | undefined, text: string) => Promise<T>,
  ): Promise<T> {
    const name = segments.at(-1)
    const parent = await this.walk(segments.slice(0, -1), makeParents)
    try {
      return await use(parent, name, volumePathText(segments))
    } finally {
      await parent.close()
    }
  }

  /** Opens the directory at `segments`, one component at a time from the volume root. */
  private async walk(
    segments: string[],
    makeMissing: Required<EntryAttributes> | undefined,
  ): Promise<FileHandle> {
    let dir = await open(this.root, DIRECTORY_FLAGS)
    try {
      await this.checkMounted(dir)
      for (const [index, name] of segments.entries()) {
        const text = volumePathText(segments.slice(0, index + 1))
        if (makeMissing !== undefined && (await makeDirectory(dir, name))) {
          const made = await openChildDirectory(dir, name, text)
          await applyAttributes(made, makeMissing).catch(async (error: unknown) => {
            await made.close()
            throw error
          })
          await dir.close()
          dir = made
          continue
        }
        const child = await openChildDirectory(dir, name, text)
        await dir.close()
        dir = child
      }
      return dir
    } catch (error) {
      await dir.close()
      throw error
    }
  }
}

function directoryAttributes(options: EntryAttributes): Required<EntryAttributes> {
  return {
    uid: options.uid ?? VOLUME_ENTRY_DEFAULTS.uid,
    gid: options.gid ?? VOLUME_ENTRY_DEFAULTS.gid,
    mode: options.mode ?? VOLUME_ENTRY_DEFAULTS.directoryMode,
  }
}

function fileAttributes(options: EntryAttributes): Required<EntryAttributes> {
  return {
    uid: options.uid ?? VOLUME_ENTRY_DEFAULTS.uid,
    gid: options.gid ?? VOLUME_ENTRY_DEFAULTS.gid,
    mode: options.mode ?? VOLUME_ENTRY_DEFAULTS.fileMode,
  }
}

/** mkdir inside `dir`; false when the name is taken (by anything: mkdir follows nothing). */
async function makeDirectory(dir: FileHandle, name: string): Promise<boolean> {
  try {
    // Private until its attributes are set: no moment open to everyone under the wrong owner.
    await mkdir(at(dir, name), 0o700)
    return true
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return false
    throw error
  }
}

/** chmod, then chown: on the descriptor, so on the entry that was opened. */
async function applyAttributes(handle: FileHandle, attributes: EntryAttributes): Promise<void> {
  if (attributes.mode !== undefined) await handle.chmod(attributes.mode)
  if (attributes.uid !== undefined || attributes.gid !== undefined) {
    const stats = await handle.stat()
    await handle.chown(attributes.uid ?? stats.uid, attributes.gid ?? stats.gid)
  }
}

/** Creates the file exclusively, or (with `force`) opens the regular file already there. */
async function openForWrite(
  parent: FileHandle,
  name: string,
  text: string,
  force: boolean,
): Promise<{ file: FileHandle; created: boolean }> {
  const path = at(parent, name)
  try {
    const flags = ENTRY_WRITE_FLAGS | constants.O_CREAT | constants.O_EXCL
    return { file: await open(path, flags, 0o600), created: true }
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error
    if (!force) throw volumePathErrors.exists(text)
  }
  let file: FileHandle
  try {
    file = await open(path, ENTRY_WRITE_FLAGS)
  } catch (error) {
    const code = errnoCode(error)
    if (code === 'ELOOP') throw volumePathErrors.symlink(text)
    if (code === 'ENOENT') throw volumePathErrors.notFound(text)
    if (code === 'EISDIR' || code === 'ENXIO' || code === 'EACCES')
      throw volumePathErrors.wrongType(text, 'a file')
    throw error
  }
  const stats = await file.stat()
  if (!stats.isFile()) {
    await file.close()
    throw volumePathErrors.wrongType(text, 'a file')
  }
  return { file, created: false }
}

/** The file's bytes from the start, one chunk a pull: a slow client slows the reads. */
function fileStream(file: FileHandle): ReadableStream<Uint8Array> {
  let position = 0
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES)
        const { bytesRead } = await file.read(buffer, 0, buffer.length, position)
        if (bytesRead === 0) {
          await file.close()
          controller.close()
          return
        }
        position += bytesRead
        controller.enqueue(buffer.subarray(0, bytesRead))
      } catch (error) {
        await file.close().catch(() => undefined)
        controller.error(error)
      }
    },
    cancel: () => file.close(),
  })
}

/**
 * Writes the body's chunks in order, each once the one before is on disk: a slow disk slows
 * the upload rather than filling memory. (A FileHandle's own write stream keeps the handle
 * from closing until the stream is destroyed; this needs none.)
 */
async function writeAll(file: FileHandle, body: Readable): Promise<void> {
  let position = 0
  // Left readable when a write fails, so the caller can still read what the client sends.
  for await (const chunk of body.iterator({ destroyOnReturn: false })) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Uint8Array)
    let offset = 0
    while (offset < bytes.length) {
      const { bytesWritten } = await file.write(bytes, offset, bytes.length - offset, position)
      offset += bytesWritten
      position += bytesWritten
    }
  }
}

/** The entry `name` of `dir`, by lstat: a symlink is reported as one, with its target. */
async function entryAt(dir: FileHandle, name: string, text: string): Promise<VolumeEntry> {
  const path = at(dir, name)
  const stats = await lstat(path).catch((error: unknown) => {
    throw errnoCode(error) === 'ENOENT' ? volumePathErrors.notFound(text) : error
  })
  const target = stats.isSymbolicLink() ? await readlink(path).catch(() => '') : undefined
  return volumeEntry(stats, text, target)
}

async function listInto(
  dir: FileHandle,
  text: string,
  depth: number,
  entries: VolumeEntry[],
): Promise<void> {
  const names = (await readdir(handlePath(dir))).sort()
  for (const name of names) {
    const path = childPath(text, name)
    // One removed between the read and its lstat is simply not listed.
    const entry = await entryAt(dir, name, path).catch(() => undefined)
    if (entry === undefined) continue
    entries.push(entry)
    if (entry.type !== 'directory' || depth <= 1) continue
    const child = await openChildDirectory(dir, name, path).catch(() => undefined)
    if (child === undefined) continue
    try {
      await listInto(child, path, depth - 1, entries)
    } finally {
      await child.close()
    }
  }
}
