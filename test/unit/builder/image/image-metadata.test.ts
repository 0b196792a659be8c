import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { envRecord } from '../../../../src/builder/image/image-config.js'
import { toolErrorReason } from '../../../../src/builder/image/image-tool.js'
import { copyArgs, inspectRawArgs } from '../../../../src/builder/image/image-tool-args.js'
import {
  hostArchitecture,
  platformManifestDigest,
} from '../../../../src/builder/image/platform-manifest.js'

const index = Buffer.from(
  JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [
      { digest: 'sha256:arm', platform: { architecture: 'arm64', os: 'linux' } },
      { digest: 'sha256:win', platform: { architecture: 'amd64', os: 'windows' } },
      { digest: 'sha256:amd', platform: { architecture: 'amd64', os: 'linux' } },
    ],
  }),
)

describe('platform manifests', () => {
  it('picks the linux entry of the architecture from an index', () => {
    expect(platformManifestDigest(index, 'amd64')).toBe('sha256:amd')
    expect(platformManifestDigest(index, 'arm64')).toBe('sha256:arm')
    expect(() => platformManifestDigest(index, 'riscv64')).toThrow(
      'the image has no linux/riscv64 variant (it has linux/arm64, windows/amd64, linux/amd64)',
    )
  })

  it('hashes the exact bytes of a single manifest', () => {
    const manifest = Buffer.from('{"schemaVersion":2,  "config":{"digest":"sha256:c"},"layers":[]}')
    const digest = `sha256:${createHash('sha256').update(manifest).digest('hex')}`
    expect(platformManifestDigest(manifest, 'amd64')).toBe(digest)
  })

  it('names architectures as images do', () => {
    expect(hostArchitecture('x64')).toBe('amd64')
    expect(hostArchitecture('arm64')).toBe('arm64')
  })
})

describe('image config', () => {
  it('reads KEY=value env entries, values may hold =', () => {
    expect(envRecord(['PATH=/bin', 'A=b=c', 'EMPTY=', 'A2=x', 'A2=y'])).toEqual({
      PATH: '/bin',
      A: 'b=c',
      EMPTY: '',
      A2: 'y',
    })
  })
})

describe('skopeo argv', () => {
  it('skips TLS verification only for loopback registries, and passes logins by file', () => {
    const remote = copyArgs('ghcr.io/a/b@sha256:1', '/t/layout', { loopback: false })
    expect(remote).toEqual(['copy', 'docker://ghcr.io/a/b@sha256:1', 'oci:/t/layout:image'])
    const local = inspectRawArgs('127.0.0.1:5000/a:1', { loopback: true, authFile: '/t/auth' })
    expect(local).toEqual([
      'inspect',
      '--raw',
      '--authfile',
      '/t/auth',
      '--tls-verify=false',
      'docker://127.0.0.1:5000/a:1',
    ])
  })
})

describe('tool errors', () => {
  it('gives the registry reason from a skopeo fatal line', () => {
    const stderr =
      'time="2026-11-25T07:02:58Z" level=fatal msg="Error parsing image name \\"docker://127.0.0.1:1/x/y:1\\": reading manifest 1 in 127.0.0.1:1/x/y: unauthorized: authentication required"\n'
    expect(toolErrorReason(stderr)).toBe(
      'reading manifest 1 in 127.0.0.1:1/x/y: unauthorized: authentication required',
    )
  })

  it('keeps a plain last line as it is', () => {
    expect(toolErrorReason('some warning\nunpack failed: no space left on device\n')).toBe(
      'unpack failed: no space left on device',
    )
  })
})
