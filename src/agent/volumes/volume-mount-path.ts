import { VolumeMountError } from '../errors.js'
import type { VolumeMount } from '../index.js'
import { TOOLBOX_MOUNT_POINT } from '../rootfs/toolbox.js'

/**
 * Where the runtime mounts file systems of its own in every sandbox (oci-spec.ts, and the
 * toolbox). A volume there, or at a directory above one, would hide it, or have the runtime
 * make its mount point inside the volume.
 */
const RUNTIME_MOUNT_POINTS = ['/proc', '/dev', '/sys', '/run', TOOLBOX_MOUNT_POINT]

/** Trees that are the kernel's or the runtime's: no volume goes inside them. */
const RUNTIME_TREES = ['/proc', '/dev', '/sys', TOOLBOX_MOUNT_POINT]

/**
 * Why a sandbox cannot have a volume mounted at `mountPath`, or undefined when it can. The
 * first three reasons are the wire contract's (§2.4, `invalid mounts:` lines); the others
 * keep a volume off the sandbox's root and the runtime's own mounts.
 */
export function volumeMountPathProblem(mountPath: string): string | undefined {
  if (mountPath === '') return 'path cannot be empty'
  if (!mountPath.startsWith('/')) return 'path must be absolute'
  const components = mountPath.split('/').filter((component) => component !== '')
  if (components.some((component) => component === '.' || component === '..')) {
    return "path must not contain any '.' or '..' components"
  }
  const normal = normalVolumeMountPath(mountPath)
  if (normal === '/') return "path '/' is the sandbox's root"
  for (const point of RUNTIME_MOUNT_POINTS) {
    if (point === normal || point.startsWith(`${normal}/`)) {
      return `path '${normal}' would hide the sandbox's ${point}`
    }
  }
  for (const tree of RUNTIME_TREES) {
    if (normal.startsWith(`${tree}/`)) return `path '${normal}' is inside the sandbox's ${tree}`
  }
  return undefined
}

/** `mountPath` without repeated or trailing slashes: `/data/` and `//data` are `/data`. */
export function normalVolumeMountPath(mountPath: string): string {
  return `/${mountPath
    .split('/')
    .filter((component) => component !== '')
    .join('/')}`
}

/** Why one entry of a list of volume mounts cannot be had, by its index in the list. */
export interface VolumeMountPathProblem {
  index: number
  reason: string
}

/**
 * Why each of `paths` cannot have a volume: volumeMountPathProblem, or a path an earlier entry
 * has already (`/data/` repeats `/data`), in the wire contract's words (§2.4). Shared with the
 * api, which adds its own reasons (an unknown volume name) to the same `invalid mounts:` list.
 */
export function volumeMountPathProblems(paths: readonly string[]): VolumeMountPathProblem[] {
  const seen = new Set<string>()
  return paths.flatMap((mountPath, index) => {
    const normal = normalVolumeMountPath(mountPath)
    const reason =
      volumeMountPathProblem(mountPath) ??
      (seen.has(normal) ? `path '${mountPath}' is already used` : undefined)
    seen.add(normal)
    return reason === undefined ? [] : [{ index, reason }]
  })
}

/** Refuses mounts a sandbox cannot have, every reason at once as the wire contract words a 400. */
export function checkVolumeMounts(mounts: readonly VolumeMount[]): void {
  const problems = volumeMountPathProblems(mounts.map((mount) => mount.path))
  if (problems.length === 0) return
  const lines = problems.map(({ index, reason }) => `\t- volume mount #${index}: ${reason}`)
  throw new VolumeMountError(['invalid mounts:', ...lines].join('\n'))
}
