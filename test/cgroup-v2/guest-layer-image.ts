import path from 'node:path'
import { runHostCommand } from '../../src/agent/host-command.js'

/**
 * An ext4 image holding the base template's one layer, for the guest to mount where the layer
 * lies. Sandboxes reach template layers through idmapped mounts, which the guest's view of the
 * host's files (9p under overlayfs) refuses; ext4 takes them. `mkfs.ext4 -d` fills the image
 * from the layer directly, with its owners, modes and setuid bits.
 */
export async function writeLayerImage(
  layers: readonly string[],
  workDir: string,
): Promise<{ path: string; image: string }> {
  const [layer, ...more] = layers
  if (layer === undefined || more.length > 0) {
    throw new Error(`the guest takes a one-layer base template, not ${layers.length} layers`)
  }
  const image = path.join(workDir, 'layer.img')
  const usedMB = Number((await runHostCommand('du', ['-sm', layer])).split('\t')[0])
  // Room for ext4's own metadata; the image is sparse, so the slack costs no disk.
  const sizeMB = Math.ceil(usedMB * 1.3) + 64
  await runHostCommand('mkfs.ext4', ['-q', '-F', '-d', layer, image, `${sizeMB}M`])
  return { path: layer, image }
}
