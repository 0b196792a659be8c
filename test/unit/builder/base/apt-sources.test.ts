import { describe, expect, it } from 'vitest'
import {
  debianSourceLines,
  parseDeb822Sources,
  parseSourcesList,
} from '../../../../src/builder/base/apt-sources.js'

// The project machines' /etc/apt/sources.list.d/debian.sources.
const deb822 = `Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
# http://snapshot.debian.org/archive/debian-security/20250520T000000Z
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`

describe('apt sources', () => {
  it('reads deb822 stanzas, one source per URI and suite', () => {
    expect(parseDeb822Sources(deb822)).toEqual([
      { uri: 'http://deb.debian.org/debian', suite: 'bookworm', components: ['main'] },
      { uri: 'http://deb.debian.org/debian', suite: 'bookworm-updates', components: ['main'] },
      {
        uri: 'http://deb.debian.org/debian-security',
        suite: 'bookworm-security',
        components: ['main'],
      },
    ])
  })

  it('skips deb-src and disabled deb822 stanzas', () => {
    const text =
      'Types: deb-src\nURIs: http://a/debian\nSuites: bookworm\nComponents: main\n\n' +
      'Types: deb\nEnabled: no\nURIs: http://b/debian\nSuites: bookworm\nComponents: main\n'
    expect(parseDeb822Sources(text)).toEqual([])
  })

  it('reads one-line sources with options, skipping comments and deb-src', () => {
    const text = [
      '# a comment',
      'deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main contrib',
      'deb-src http://mirror.example/debian bookworm main',
      '',
    ].join('\n')
    expect(parseSourcesList(text)).toEqual([
      { uri: 'http://mirror.example/debian', suite: 'bookworm', components: ['main', 'contrib'] },
    ])
  })

  it("keeps the release's own pockets with main, and nothing else", () => {
    const sources = [
      ...parseDeb822Sources(deb822),
      { uri: 'https://deb.nodesource.com/node_20.x', suite: 'nodistro', components: ['main'] },
      { uri: 'http://deb.debian.org/debian', suite: 'bookworm-backports', components: ['main'] },
      { uri: 'http://deb.debian.org/debian', suite: 'trixie', components: ['main'] },
      { uri: 'http://deb.debian.org/debian', suite: 'bookworm', components: ['main'] },
    ]
    expect(debianSourceLines(sources, 'bookworm')).toEqual([
      'deb http://deb.debian.org/debian bookworm main',
      'deb http://deb.debian.org/debian bookworm-updates main',
      'deb http://deb.debian.org/debian-security bookworm-security main',
    ])
  })
})
