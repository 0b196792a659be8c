import { lstat, readdir, readFile, readlink } from 'node:fs/promises'
import path from 'node:path'

/**
 * Packs a directory as a cpio "newc" archive, the format the kernel unpacks an initramfs from
 * (Documentation/driver-api/early-userspace/buffer-format.rst). Written here rather than
 * piped through `cpio`, which this machine lacks (busybox's applet needs a file list and
 * mixes its block count into the output streams). Keeps regular files, directories and
 * symlinks with their modes; every entry is owned by root.
 */
export async function newcArchive(dir: string): Promise<Buffer> {
  const parts: Buffer[] = []
  let inode = 1
  for (const relative of await treeEntries(dir)) {
    const full = path.join(dir, relative)
    const stats = await lstat(full)
    const data = stats.isSymbolicLink()
      ? Buffer.from(await readlink(full))
      : stats.isFile()
        ? await readFile(full)
        : Buffer.alloc(0)
    parts.push(entry(relative, stats.mode, data, inode++))
  }
  parts.push(entry('TRAILER!!!', 0, Buffer.alloc(0), 0))
  return Buffer.concat(parts)
}

/** Every path under dir, relative, each directory before what it holds. */
async function treeEntries(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true })
  return entries.sort()
}

function entry(name: string, mode: number, data: Buffer, inode: number): Buffer {
  const nameBytes = Buffer.from(`${name}\0`)
  const fields = [
    inode,
    mode,
    0, // uid
    0, // gid
    1, // nlink
    0, // mtime
    data.length,
    0, // devmajor
    0, // devminor
    0, // rdevmajor
    0, // rdevminor
    nameBytes.length,
    0, // check (unused by "070701")
  ]
  const header = `070701${fields.map((field) => field.toString(16).padStart(8, '0')).join('')}`
  // The name starts after the 110-byte header and is padded so data starts 4-byte aligned;
  // the data is padded so the next header is.
  return Buffer.concat([
    Buffer.from(header),
    nameBytes,
    padding(header.length + nameBytes.length),
    data,
    padding(data.length),
  ])
}

function padding(length: number): Buffer {
  return Buffer.alloc((4 - (length % 4)) % 4)
}
