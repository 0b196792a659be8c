/** An image reference split the way Docker reads it (`ubuntu` is `docker.io/library/ubuntu`). */
export interface ImageReference {
  /** Registry host, with its port when it has one (`docker.io`, `127.0.0.1:5000`). */
  registry: string
  /** Repository path inside the registry (`library/ubuntu`). */
  repository: string
  /** `:tag` or `@sha256:…`; `:latest` when the reference names neither. */
  suffix: string
}

const DOCKER_HUB = 'docker.io'

/**
 * Splits a reference as Docker does: the first path component is a registry host only when it
 * holds a `.` or `:` or is `localhost`; otherwise the image is on Docker Hub, and a single
 * name there lives under `library/`.
 */
export function parseImageReference(image: string): ImageReference {
  const atDigest = image.indexOf('@')
  const named = atDigest === -1 ? image : image.slice(0, atDigest)
  const digest = atDigest === -1 ? '' : image.slice(atDigest)
  const lastSlash = named.lastIndexOf('/')
  const tagColon = named.indexOf(':', lastSlash + 1)
  const path = tagColon === -1 ? named : named.slice(0, tagColon)
  const tag = tagColon === -1 ? '' : named.slice(tagColon)
  if (path === '' || /\s/.test(image)) throw new Error(`invalid image reference "${image}"`)
  const firstSlash = path.indexOf('/')
  const first = firstSlash === -1 ? '' : path.slice(0, firstSlash)
  const hasHost = first.includes('.') || first.includes(':') || first === 'localhost'
  const registry = hasHost ? first : DOCKER_HUB
  let repository = hasHost ? path.slice(firstSlash + 1) : path
  if (registry === DOCKER_HUB && !repository.includes('/')) repository = `library/${repository}`
  const suffix = digest !== '' ? digest : tag !== '' ? tag : ':latest'
  return { registry, repository, suffix }
}

/** The reference in full, as skopeo's `docker://` transport takes it. */
export function formatImageReference(reference: ImageReference): string {
  return `${reference.registry}/${reference.repository}${reference.suffix}`
}

/**
 * Whether the registry listens on this machine's loopback (127.0.0.0/8, localhost, [::1]):
 * such registries (test registries, a local mirror) usually serve plain HTTP, and their traffic
 * never leaves the host, so skipping TLS verification there exposes nothing on a network.
 */
export function isLoopbackRegistry(registry: string): boolean {
  const host = registry.startsWith('[')
    ? registry.slice(1, registry.indexOf(']'))
    : registry.replace(/:\d+$/, '')
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host)
}
