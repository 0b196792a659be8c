import { describe, expect, it } from 'vitest'
import { resolveUserPath } from '../../../src/envd/paths.js'

const user = { home: '/home/user' }

describe('resolveUserPath', () => {
  it('expands ~ and ~/ to the home directory', () => {
    expect(resolveUserPath('~', user, '/work')).toBe('/home/user')
    expect(resolveUserPath('~/a/b', user, '/work')).toBe('/home/user/a/b')
  })

  it('resolves relative paths against the default workdir, else the home', () => {
    expect(resolveUserPath('a.txt', user, '/work')).toBe('/work/a.txt')
    expect(resolveUserPath('a.txt', user, undefined)).toBe('/home/user/a.txt')
  })

  it('keeps absolute paths and cleans them', () => {
    expect(resolveUserPath('/etc//x/../hosts', user, '/work')).toBe('/etc/hosts')
    expect(resolveUserPath('../up', user, '/work/sub')).toBe('/work/up')
  })

  it('does not treat ~name as the home', () => {
    expect(resolveUserPath('~other', user, '/work')).toBe('/work/~other')
  })
})
