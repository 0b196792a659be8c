/**
 * Why a volume content operation failed, as the content API tells its client (wave2-contracts
 * §2.3): a missing path, one that exists already, a component that is no directory, a symlink
 * the API will not follow, the root that cannot go, a full volume, or an entry of a kind the
 * operation cannot take (a directory read as a file, a FIFO).
 */
export type VolumePathErrorKind =
  | 'notFound'
  | 'exists'
  | 'notDirectory'
  | 'symlink'
  | 'root'
  | 'noSpace'
  | 'wrongType'
  | 'tooDeep'
  | 'busy'
  | 'nameTooLong'

/** The longest name of one entry, in bytes (ext4's). */
export const MAX_NAME_BYTES = 255

/** A volume content operation refused or failed on `path` (the absolute path in the volume). */
export class VolumePathError extends Error {
  constructor(
    readonly kind: VolumePathErrorKind,
    readonly path: string,
    message: string,
  ) {
    super(message)
  }
}

/** The contract's texts (§2.3) where it quotes them, Sandbar's own elsewhere. */
export const volumePathErrors = {
  notFound: (path: string) =>
    new VolumePathError('notFound', path, `failed to stat: "${path}" not found.`),
  exists: (path: string) => new VolumePathError('exists', path, `"${path}" already exists`),
  notDirectory: (path: string) =>
    new VolumePathError(
      'notDirectory',
      path,
      `"${path}": a component of the path is a file, but must be a directory`,
    ),
  symlink: (path: string) =>
    new VolumePathError(
      'symlink',
      path,
      `"${path}": a component of the path is a symbolic link, which the volume content API does not follow`,
    ),
  root: () => new VolumePathError('root', '/', 'cannot delete root'),
  noSpace: (path: string) =>
    new VolumePathError('noSpace', path, `"${path}": no space left on the volume`),
  wrongType: (path: string, expected: string) =>
    new VolumePathError('wrongType', path, `"${path}" is not ${expected}`),
  tooDeep: (path: string, depth: number) =>
    new VolumePathError('tooDeep', path, `"${path}" is nested deeper than ${depth} directories`),
  nameTooLong: (name: string) =>
    new VolumePathError(
      'nameTooLong',
      name,
      `"${name.slice(0, 64)}…" is longer than a name may be (${MAX_NAME_BYTES} bytes)`,
    ),
  busy: (path: string) =>
    new VolumePathError('busy', path, `"${path}" kept changing while it was removed; try again`),
} as const
