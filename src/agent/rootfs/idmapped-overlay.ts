import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { runHostCommand } from '../host-command.js'
import { type OverlaySpec, overlayOptions } from './overlay.js'

export interface IdmappedOverlaySpec extends OverlaySpec {
  /** Path of the idmapped-mount binary (idmapped-mount.ts). */
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
 * detached once the overlay holds it (detachStages removes what a killed helper left); the
 * overlay's lowerdir keeps those names, so it still says which layer it stacks.
 */
export async function mountIdmappedOverlay(spec: IdmappedOverlaySpec): Promise<void> {
  const stages = spec.lower.map((layer) => path.join(spec.stageDir, path.basename(layer)))
  if (new Set(stages).size !== stages.length) throw new Error('template layers share a name')
  for (const stage of stages) await mkdir(stage, { recursive: true })
  const options = overlayOptions({ lower: stages, upper: spec.upper, work: spec.work })
  const pairs = spec.lower.flatMap((layer, index) => [layer, stages[index] ?? ''])
  await runHostCommand(spec.helper, ['overlay', spec.userNamespace, spec.target, options, ...pairs])
}
