import { volumeMountPathProblems } from '../agent/index.js'
import type { SandboxVolumeMount } from '../store/index.js'
import { apiErrors } from './errors.js'

/** A `volumeMounts` entry as the SDK sends it (wave2-contracts §2.4): a volume by name. */
export interface RequestedVolumeMount {
  name: string
  path: string
}

/**
 * The mounts a create asks for, each resolved to the team's volume of that name, or the
 * contract's 400 listing every bad entry with its index: an unknown name first, as E2B checks
 * it, else what the agent finds wrong with the path.
 */
export function resolveVolumeMounts(
  requested: readonly RequestedVolumeMount[],
  volumeIDsByName: ReadonlyMap<string, string>,
): SandboxVolumeMount[] {
  const pathProblems = new Map(
    volumeMountPathProblems(requested.map((mount) => mount.path)).map(({ index, reason }) => [
      index,
      reason,
    ]),
  )
  const resolved: SandboxVolumeMount[] = []
  const problems: string[] = []
  requested.forEach((mount, index) => {
    const volumeID = volumeIDsByName.get(mount.name)
    const reason =
      volumeID === undefined ? `volume '${mount.name}' not found` : pathProblems.get(index)
    if (volumeID === undefined || reason !== undefined) {
      problems.push(`\t- volume mount #${index}: ${reason}`)
    } else {
      resolved.push({ volumeID, name: mount.name, path: mount.path })
    }
  })
  if (problems.length > 0) throw apiErrors.invalidVolumeMounts(problems)
  return resolved
}
