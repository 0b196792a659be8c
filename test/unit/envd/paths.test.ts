import { describe, expect, it } from 'vitest'
import { resolveUserPath } from '../../../src/envd/paths.js'

const user = { home: '/home/user' }

describe('resolveUserPath', () => {
  it('expands ~ and ~/ to the home directory', () => {
    expect(resolveUserPath('~', user, '/work')).toBe('/home/user')
    expect(resolveUserPath('~/a/b', user, '/work')).toBe('/home/user/a/b')
  })

  it('resolves relative paths against the home, whatever the default workdir', () => {
    expect(resolveUserPath('a.txt', user, '/work')).toBe('/home/user/a.txt')
    expect(resolveUserPath('a.txt', { home: '/root' }, '/home/user')).toBe('/root/a.txt')
  })

  it('takes an empty path as the default workdir, else the home', () => {
    expect(resolveUserPath('', user, '/work')).toBe('/work')
    expect(resolveUserPath('', user, undefined)).toBe('/home/user')
  })

  it('keeps absolute paths and cleans them', () => {
    expect(resolveUserPath('/etc//x/../hosts', user, '/work')).toBe('/etc/hosts')
    expect(resolveUserPath('../up', user, '/work')).toBe('/home/up')
  })

  it('does not treat ~name as a home', () => {
    expect(resolveUserPath('~other', user, '/work')).toBe('/home/user/~other')
  })
})
