import { mkdir, readdir, rmdir } from 'node:fs/promises'
import path from 'node:path'
import { runHostCommand } from '../host-command.js'
import { type OverlaySpec, overlayOptions } from './overlay.js'

/**
 * The helper that mounts a sandbox's root (idmapped-overlay.c): scripts/build.mjs compiles it
 * into the build directory, beside the bundles. bookworm's mount(8) (util-linux 2.38) has no
 * `X-mount.idmap`, and Node cannot call mount_setattr(2).
 */
export const IDMAPPED_OVERLAY_HELPER = 'idmapped-overlay'

export interface IdmappedOverlaySpec extends OverlaySpec {
  /** Path of the idmapped-overlay binary. */
  helper: string
  /** The sandbox's pinned user namespace: its ID map becomes the layers' ID map. */
  userNamespace: string
  /** A directory of the sandbox's own, where the idmapped layers appear while the helper runs. */
  stageDir: string
}

/**
 * Mounts the overlay at `target` with each lower layer read-only and idmapped through the
 * sandbox's user namespace: files owned by 0 or 1000 in the layer are the sandbox's root and
 * user, while the layer itself stays owned by host IDs no sandbox has. Upper and work must
 * belong to the sandbox's root as the host sees it (its ID map's first host ID): the merged
 * `/` takes its owner from upper. Each layer is staged at `<stageDir>/<layer name>` and
 * detached once the overlay holds it; the overlay's lowerdir keeps those names, so it still
 * says which layer it stacks.
 */
export async function mountIdmappedOverlay(spec: IdmappedOverlaySpec): Promise<void> {
  const stages = spec.lower.map((layer) => path.join(spec.stageDir, path.basename(layer)))
  if (new Set(stages).size !== stages.length) throw new Error('template layers share a name')
  for (const stage of stages) await mkdir(stage, { recursive: true })
  const options = overlayOptions({ lower: stages, upper: spec.upper, work: spec.work })
  const pairs = spec.lower.flatMap((layer, index) => [layer, stages[index] ?? ''])
  await runHostCommand(spec.helper, [spec.userNamespace, spec.target, options, ...pairs])
}

/**
 * Removes the staged layer directories, detaching (umount -l) any layer a helper killed midway
 * left mounted there: rmdir(2) refuses a mount point with EBUSY, which spares reading the
 * mount table on every kill. None there is fine.
 */
export async function detachStagedLayers(stageDir: string): Promise<void> {
  const names = await readdir(stageDir).catch(() => [])
  const mounted: string[] = []
  for (const name of names) {
    const stage = path.join(stageDir, name)
    await rmdir(stage).catch((error: unknown) => {
      const code = error instanceof Error && 'code' in error ? error.code : undefined
      if (code === 'EBUSY') mounted.push(stage)
      else if (code !== 'ENOENT') throw error
    })
  }
  if (mounted.length === 0) return
  await runHostCommand('umount', ['-l', ...mounted])
  for (const stage of mounted) await rmdir(stage)
}
