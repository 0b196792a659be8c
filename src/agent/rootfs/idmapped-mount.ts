import { readdir, rmdir } from 'node:fs/promises'
import path from 'node:path'
import { errnoCode } from '../../errno-code.js'
import { runHostCommand } from '../host-command.js'

/**
 * The helper that makes a sandbox's idmapped mounts (idmapped-mount.c): its root's layers
 * (`overlay`) and its volumes (`bind`). scripts/build.mjs compiles it into the build directory,
 * beside the bundles. bookworm's mount(8) (util-linux 2.38) has no `X-mount.idmap`, and Node
 * cannot call mount_setattr(2).
 */
export const IDMAPPED_MOUNT_HELPER = 'idmapped-mount'

/**
 * Removes the stage directories in `stageDir`, detaching (umount -l) whatever is still
 * mounted there: a volume's stage once the container holds its own bind, or a layer a helper
 * killed midway left. rmdir(2) refuses a mount point with EBUSY, which spares reading the
 * mount table on every kill. None there is fine.
 */
export async function detachStages(stageDir: string): Promise<void> {
  const names = await readdir(stageDir).catch(() => [])
  const mounted: string[] = []
  for (const name of names) {
    const stage = path.join(stageDir, name)
    await rmdir(stage).catch((error: unknown) => {
      const code = errnoCode(error)
      if (code === 'EBUSY') mounted.push(stage)
      else if (code !== 'ENOENT') throw error
    })
  }
  if (mounted.length === 0) return
  await runHostCommand('umount', ['-l', ...mounted])
  for (const stage of mounted) await rmdir(stage)
}
