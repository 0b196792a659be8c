import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { runHostCommand } from '../host-command.js'
import { mountsUnder } from './mountinfo.js'

/**
 * The helper that makes idmapped mounts (idmap-mount.c): scripts/build.mjs compiles it into
 * the build directory, beside the bundles. bookworm's mount(8) (util-linux 2.38) has no
 * `X-mount.idmap` and Node cannot call mount_setattr(2).
 */
export const IDMAP_MOUNT_HELPER = 'idmap-mount'

export interface IdmappedLayersSpec {
  /** Path of the idmap-mount binary. */
  helper: string
  /** The sandbox's pinned user namespace: its ID map becomes the mounts' ID map. */
  userNamespace: string
  /** Template layer directories, stored with the image's own IDs (0, 1000, …). */
  layers: readonly string[]
  /** A directory of the sandbox's own, where the idmapped layers appear until detached. */
  stageDir: string
}

/**
 * Mounts each layer read-only and idmapped through the sandbox's user namespace at
 * `<stageDir>/<layer name>`, and returns those paths in the order of `layers`: files owned by
 * 0 or 1000 in the layer are the sandbox's root and user, while the layer itself stays owned
 * by host IDs no sandbox has. The name keeps the layer's, so an overlay's lowerdir still says
 * which layer it stacks (base-template.ts checks that before replacing one).
 */
export async function stageIdmappedLayers(spec: IdmappedLayersSpec): Promise<string[]> {
  const names = new Set(spec.layers.map((layer) => path.basename(layer)))
  if (names.size !== spec.layers.length) throw new Error('template layers share a name')
  const staged = spec.layers.map((layer) => path.join(spec.stageDir, path.basename(layer)))
  for (const dir of staged) await mkdir(dir, { recursive: true })
  const pairs = spec.layers.flatMap((layer, index) => [layer, staged[index] ?? ''])
  await runHostCommand(spec.helper, [spec.userNamespace, ...pairs])
  return staged
}

/**
 * Detaches every idmapped layer still mounted under `stageDir` (umount -l): an overlay made
 * from them holds its own reference, so its layers stay while nothing else can reach them.
 * None mounted is fine.
 */
export async function detachStagedLayers(stageDir: string): Promise<void> {
  const resolved = path.resolve(stageDir)
  const mounted = (await mountsUnder(resolved)).filter((point) => point !== resolved)
  if (mounted.length > 0) await runHostCommand('umount', ['-l', ...mounted])
}
