import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { runHostCommand } from '../host-command.js'
import type { VolumeMount } from '../index.js'
import { readMounts } from '../rootfs/mountinfo.js'
import { normalVolumeMountPath } from './volume-mount-path.js'

export interface VolumeStageSpec {
  /** Path of the idmapped-mount binary (rootfs/idmapped-mount.ts). */
  helper: string
  /** The sandbox's pinned user namespace: its ID map becomes the volumes' ID map. */
  userNamespace: string
  mounts: readonly VolumeMount[]
  /** A directory of the sandbox's own, where each volume appears until the runtime binds it. */
  stageDir: string
}

/** A staged volume and where the runtime binds it in the container. */
export interface VolumeBind {
  source: string
  destination: string
}

/**
 * Mounts each volume's host directory at `<stageDir>/<n>`, read-write, nodev, nosuid and
 * idmapped through the sandbox's user namespace (idmapped-mount.c `bind`): a file stored as ID
 * 1000 is the sandbox's `user`, and what its `user` writes is stored as 1000, so every sandbox
 * and the host see the same owners. A bind copies the idmap, so the runtime's bind of a stage
 * is idmapped too; once the container holds it, the stage can go (detachStages). Returns the
 * binds parents first, so a volume inside another is mounted after it.
 */
export async function stageVolumeMounts(spec: VolumeStageSpec): Promise<VolumeBind[]> {
  if (spec.mounts.length === 0) return []
  await checkMountPoints(spec.mounts.map((mount) => mount.hostDir))
  const binds = spec.mounts.map((mount, index) => ({
    hostDir: mount.hostDir,
    source: path.join(spec.stageDir, String(index)),
    destination: normalVolumeMountPath(mount.path),
  }))
  for (const bind of binds) await mkdir(bind.source, { recursive: true })
  const pairs = binds.flatMap((bind) => [bind.hostDir, bind.source])
  await runHostCommand(spec.helper, ['bind', spec.userNamespace, ...pairs])
  return binds
    .map(({ source, destination }) => ({ source, destination }))
    .sort((a, b) => depth(a.destination) - depth(b.destination))
}

/**
 * Refuses a host directory that is not where a file system is mounted, as the agent's mount
 * table names it (absolute, no symlink along the way): an unmounted volume's directory lies on
 * the host's own file system, which a sandbox must never fill, and a directory inside a volume
 * is one a sandbox may swap for a symlink.
 */
async function checkMountPoints(hostDirs: readonly string[]): Promise<void> {
  const mountPoints = new Set((await readMounts()).map((entry) => entry.mountPoint))
  for (const hostDir of hostDirs) {
    if (!mountPoints.has(hostDir)) {
      throw new Error(`volume host directory '${hostDir}' is not a mount point`)
    }
  }
}

function depth(mountPath: string): number {
  return mountPath.split('/').length
}
