import path from 'node:path'

/** One sandbox's root filesystem: template layers below, the sandbox's own directory on top. */
export interface OverlaySpec {
  /** Layer directories, lowest first (the order of SandboxTemplate.layers). */
  lower: readonly string[]
  /** Receives every write of the sandbox. */
  upper: string
  /** overlayfs's scratch directory; same filesystem as `upper`. */
  work: string
  /** Where the merged tree appears (the container's rootfs). */
  target: string
}

/**
 * The `-o` value for mount(8). overlayfs wants lowerdir top-first (the leftmost directory wins),
 * while SandboxTemplate lists layers lowest first, so the list is reversed. Paths holding the
 * option separators (`,` `:`) or a backslash are refused rather than escaped.
 */
export function overlayOptions(spec: Pick<OverlaySpec, 'lower' | 'upper' | 'work'>): string {
  if (spec.lower.length === 0) throw new Error('an overlay needs at least one lower layer')
  for (const dir of [...spec.lower, spec.upper, spec.work]) {
    if (!path.isAbsolute(dir) || /[,:\\\n]/.test(dir)) {
      throw new Error(`overlay directory must be absolute without , : or \\: ${dir}`)
    }
  }
  const lowerdir = [...spec.lower].reverse().join(':')
  return `lowerdir=${lowerdir},upperdir=${spec.upper},workdir=${spec.work}`
}
