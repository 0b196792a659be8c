import { posix } from 'node:path'
import { StepError } from './step-error.js'

/** WORKDIR's target (§2.2): relative to the current workdir, or `/` before any; normalized. */
export function resolveWorkdir(path: string, current: string | undefined): string {
  if (path === '') throw new StepError('WORKDIR requires a path argument')
  return posix.resolve(current ?? '/', path)
}

const GLOB_META = /[*?[\]{}]/

/**
 * Where a COPY source sits in its archive (§2.3: the archive holds the matched paths relative to
 * the context directory). A glob's matches keep their paths below the glob's base — the
 * segments before the first one with a glob character — so `src/*.ts` yields base `src` and a
 * glob flag; a plain path is its own base.
 */
export function copySource(src: string): { base: string; glob: boolean } {
  const segments = src.split('/').filter((segment) => segment !== '')
  const firstGlob = segments.findIndex((segment) => GLOB_META.test(segment))
  const glob = firstGlob >= 0
  const base = posix.normalize(segments.slice(0, glob ? firstGlob : undefined).join('/') || '.')
  if (base === '..' || base.startsWith('../')) {
    throw new StepError(`COPY source '${src}' is outside the build context`)
  }
  return { base: base === '.' ? '' : base, glob }
}

/**
 * COPY's destination: absolute when `dest` is or a workdir is set, else relative (the copy script
 * resolves it against the user's home, §2.2). `directory`: Docker's trailing-`/` rule, which `.`
 * and `..` also meet.
 */
export function copyDestination(
  dest: string,
  workdir: string | undefined,
): { path: string; directory: boolean } {
  if (dest === '') throw new StepError('COPY requires a destination path')
  const directory = /(^|\/)\.{0,2}$/.test(dest)
  const path = posix.isAbsolute(dest) || workdir ? posix.resolve(workdir ?? '/', dest) : dest
  // No trailing slash: the copy script appends names to it.
  return { path: posix.normalize(path).replace(/(.)\/+$/, '$1'), directory }
}

/** COPY's owner (§2.2): the context user by default; `name` alone means `name:name`. */
export function copyOwner(owner: string, contextUser: string): string {
  const spec = owner || contextUser
  const full = spec.includes(':') ? spec : `${spec}:${spec}`
  if (!/^[^\s:-][^\s:]*:[^\s:-][^\s:]*$/.test(full)) {
    throw new StepError(`COPY owner '${spec}' is not user or user:group`)
  }
  return full
}

/** COPY's optional mode: octal as the SDK sends it (`"0755"`), or empty for the archive's own. */
export function copyMode(mode: string): string {
  if (mode !== '' && !/^[0-7]{3,4}$/.test(mode)) {
    throw new StepError(`COPY mode '${mode}' is not an octal file mode`)
  }
  return mode
}
