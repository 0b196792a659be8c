import { chmod, lchown, lstat, readdir } from 'node:fs/promises'
import path from 'node:path'
import { runHostCommand } from '../host-command.js'
import type { IDMap } from '../user-namespace.js'

/**
 * Copies a stopped sandbox's upper layer into `dest` as a template layer: every file, mode,
 * xattr (overlayfs's opaque markers among them) and whiteout as the sandbox left it, with owners
 * shifted back from the sandbox's host IDs to the image's (host ID `idMap.hostID + n` → `n`), as
 * layers store them. Owners outside the sandbox's range (whiteouts, made by overlayfs as host
 * root) keep theirs.
 */
export async function copyUpperAsLayer(upper: string, dest: string, idMap: IDMap): Promise<void> {
  // cp -a keeps owners, modes, times, hard links, device nodes (whiteouts) and xattrs.
  await runHostCommand('cp', ['-a', `${upper}/.`, dest])
  await shiftOwners(dest, idMap)
}

async function shiftOwners(dir: string, idMap: IDMap): Promise<void> {
  const shift = (id: number) =>
    id >= idMap.hostID && id < idMap.hostID + idMap.size ? id - idMap.hostID : id
  const visit = async (file: string): Promise<void> => {
    const stats = await lstat(file)
    const uid = shift(stats.uid)
    const gid = shift(stats.gid)
    if (uid !== stats.uid || gid !== stats.gid) {
      await lchown(file, uid, gid)
      // chown(2) clears set-user-ID and set-group-ID bits, even for root: put them back.
      if (!stats.isSymbolicLink() && (stats.mode & 0o6000) !== 0) {
        await chmod(file, stats.mode & 0o7777)
      }
    }
    if (stats.isDirectory()) {
      for (const name of await readdir(file)) await visit(path.join(file, name))
    }
  }
  await visit(dir)
}
