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
 * keep a volume off the sandbox's root and the runtime's own mounts. Shared with the api so it
 * refuses such mounts with a 400 before anything starts.
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

/**
 * Refuses mounts a sandbox cannot have (volumeMountPathProblem, or one path twice), all
 * reasons at once in the wire contract's `invalid mounts:` form (§2.4).
 */
export function checkVolumeMounts(mounts: readonly VolumeMount[]): void {
  const seen = new Set<string>()
  const reasons = mounts.flatMap((mount, index) => {
    const normal = normalVolumeMountPath(mount.path)
    const problem =
      volumeMountPathProblem(mount.path) ??
      (seen.has(normal) ? `path '${mount.path}' is already used` : undefined)
    seen.add(normal)
    return problem === undefined ? [] : [`\t- volume mount #${index}: ${problem}`]
  })
  if (reasons.length > 0) throw new VolumeMountError(['invalid mounts:', ...reasons].join('\n'))
}
