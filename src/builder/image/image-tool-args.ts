/** How skopeo reaches a registry. */
export interface RegistryAccess {
  /** containers-auth.json file with the login; none for anonymous pulls. */
  authFile?: string
  /**
   * Registry on loopback: plain HTTP allowed. `--tls-verify=false` makes skopeo try HTTPS
   * without checking the certificate and fall back to HTTP, which a loopback registry
   * (a test registry, a local mirror) usually speaks; its traffic never leaves the host.
   */
  loopback: boolean
}

/** `skopeo inspect --raw`: the manifest (or index) a reference names, without any layer. */
export function inspectRawArgs(source: string, access: RegistryAccess): string[] {
  return [
    'inspect',
    '--raw',
    ...(access.authFile === undefined ? [] : ['--authfile', access.authFile]),
    ...(access.loopback ? ['--tls-verify=false'] : []),
    `docker://${source}`,
  ]
}

/**
 * `skopeo copy` of one platform's manifest (`source` names it by digest, so nothing between
 * the digest look-up and the copy can change what is pulled) into an OCI layout.
 */
export function copyArgs(source: string, layout: string, access: RegistryAccess): string[] {
  return [
    'copy',
    ...(access.authFile === undefined ? [] : ['--src-authfile', access.authFile]),
    ...(access.loopback ? ['--src-tls-verify=false'] : []),
    `docker://${source}`,
    `oci:${layout}:image`,
  ]
}

/**
 * `umoci unpack` as root: files keep the owners the image gives them (no `--rootless`), and
 * whiteouts of upper layers delete what lower layers put there.
 */
export function unpackArgs(layout: string, bundle: string): string[] {
  return ['unpack', '--image', `${layout}:image`, bundle]
}
