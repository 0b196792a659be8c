import { describe, expect, it } from 'vitest'
import {
  copyDestination,
  copyMode,
  copyOwner,
  copySource,
  resolveWorkdir,
} from '../../../../src/builder/steps/step-paths.js'

describe('resolveWorkdir', () => {
  it('resolves against the current workdir, or / before any, and normalizes', () => {
    expect(resolveWorkdir('app', undefined)).toBe('/app')
    expect(resolveWorkdir('src/../lib/', '/home/user')).toBe('/home/user/lib')
    expect(resolveWorkdir('/opt//x/', '/home/user')).toBe('/opt/x')
    expect(resolveWorkdir('..', '/')).toBe('/')
  })

  it('refuses an empty path', () => {
    expect(() => resolveWorkdir('', '/')).toThrow('WORKDIR requires a path argument')
  })
})

describe('copySource', () => {
  it('is its own base for a plain path, and the part before the first glob for a glob', () => {
    expect(copySource('file.txt')).toEqual({ base: 'file.txt', glob: false })
    expect(copySource('./dir/sub/')).toEqual({ base: 'dir/sub', glob: false })
    expect(copySource('.')).toEqual({ base: '', glob: false })
    expect(copySource('src/*.ts')).toEqual({ base: 'src', glob: true })
    expect(copySource('**/*.py')).toEqual({ base: '', glob: true })
    expect(copySource('a/b[0-9]/c')).toEqual({ base: 'a', glob: true })
  })

  it('refuses a source outside the context', () => {
    expect(() => copySource('../secret')).toThrow(
      "COPY source '../secret' is outside the build context",
    )
  })
})

describe('copyDestination', () => {
  it('resolves a relative destination against the workdir and keeps the trailing-slash rule', () => {
    expect(copyDestination('app/', '/srv')).toEqual({ path: '/srv/app', directory: true })
    expect(copyDestination('app', '/srv')).toEqual({ path: '/srv/app', directory: false })
    expect(copyDestination('.', '/srv')).toEqual({ path: '/srv', directory: true })
    expect(copyDestination('/etc/x.conf', undefined)).toEqual({
      path: '/etc/x.conf',
      directory: false,
    })
    expect(copyDestination('/', undefined)).toEqual({ path: '/', directory: true })
  })

  it('leaves a relative destination relative when there is no workdir (the home resolves it)', () => {
    expect(copyDestination('app/', undefined)).toEqual({ path: 'app', directory: true })
    expect(copyDestination('./a/../b', undefined)).toEqual({ path: 'b', directory: false })
  })
})

describe('copyOwner and copyMode', () => {
  it('defaults to the context user and doubles a bare name', () => {
    expect(copyOwner('', 'user')).toBe('user:user')
    expect(copyOwner('www', 'user')).toBe('www:www')
    expect(copyOwner('1000:100', 'user')).toBe('1000:100')
  })

  it('refuses owners that are not user or user:group', () => {
    expect(() => copyOwner('-R', 'user')).toThrow("COPY owner '-R' is not user or user:group")
    expect(() => copyOwner('a:b:c', 'user')).toThrow("COPY owner 'a:b:c' is not user or user:group")
  })

  it('accepts octal modes and empty, and refuses the rest', () => {
    expect(copyMode('0755')).toBe('0755')
    expect(copyMode('')).toBe('')
    expect(() => copyMode('u+x')).toThrow("COPY mode 'u+x' is not an octal file mode")
  })
})
