import { describe, expect, it } from 'vitest'
import { BASE_PACKAGES, mmdebstrapArgs } from '../../../../src/builder/base/mmdebstrap-args.js'

const sources = [
  'deb http://deb.debian.org/debian bookworm main',
  'deb http://deb.debian.org/debian-security bookworm-security main',
]

describe('mmdebstrapArgs', () => {
  it('builds a minbase directory as root with the packages, then suite, target and sources', () => {
    const args = mmdebstrapArgs({ suite: 'bookworm', packages: BASE_PACKAGES, sources }, '/d/t')
    expect(args).toEqual([
      '--variant=minbase',
      '--mode=root',
      '--format=directory',
      '--verbose',
      '--include=python3,python-is-python3,python3-pip,nodejs,npm,git,curl,ca-certificates,sudo,procps,iproute2',
      'bookworm',
      '/d/t',
      ...sources,
    ])
  })

  it('keeps each source line one argv element (no shell splitting)', () => {
    const args = mmdebstrapArgs({ suite: 'bookworm', packages: ['git'], sources }, '/t')
    expect(args.slice(-2)).toEqual(sources)
  })

  it('refuses to run without a Debian source rather than fall back to another mirror', () => {
    expect(() => mmdebstrapArgs({ suite: 'bookworm', packages: [], sources: [] }, '/t')).toThrow(
      'no Debian source for bookworm',
    )
  })
})
