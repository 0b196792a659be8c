import { describe, expect, it } from 'vitest'
import { VolumeMountError } from '../../../../src/agent/errors.js'
import {
  checkVolumeMounts,
  normalVolumeMountPath,
  volumeMountPathProblem,
  volumeMountPathProblems,
} from '../../../../src/agent/volumes/volume-mount-path.js'

describe('volumeMountPathProblem', () => {
  it('takes absolute paths where no mount of the runtime is', () => {
    for (const path of [
      '/data',
      '/home/user/data',
      '/mnt/a/b',
      '/run/volume',
      '/data/',
      '/.cache',
    ]) {
      expect(volumeMountPathProblem(path)).toBeUndefined()
    }
  })

  it("gives the wire contract's reasons for empty, relative and dotted paths", () => {
    expect(volumeMountPathProblem('')).toBe('path cannot be empty')
    expect(volumeMountPathProblem('data')).toBe('path must be absolute')
    const dots = "path must not contain any '.' or '..' components"
    expect(volumeMountPathProblem('/data/./x')).toBe(dots)
    expect(volumeMountPathProblem('/data/../etc')).toBe(dots)
    expect(volumeMountPathProblem('/..')).toBe(dots)
  })

  it("refuses the sandbox's root, the runtime's mounts and the directories above them", () => {
    expect(volumeMountPathProblem('/')).toBe("path '/' is the sandbox's root")
    expect(volumeMountPathProblem('//')).toBe("path '/' is the sandbox's root")
    expect(volumeMountPathProblem('/proc')).toBe("path '/proc' would hide the sandbox's /proc")
    expect(volumeMountPathProblem('/dev/')).toBe("path '/dev' would hide the sandbox's /dev")
    expect(volumeMountPathProblem('/run')).toBe("path '/run' would hide the sandbox's /run")
    expect(volumeMountPathProblem('/.sandbar')).toBe(
      "path '/.sandbar' would hide the sandbox's /.sandbar",
    )
  })

  it('refuses paths inside the kernel and runtime trees', () => {
    expect(volumeMountPathProblem('/proc/sys')).toBe(
      "path '/proc/sys' is inside the sandbox's /proc",
    )
    expect(volumeMountPathProblem('/sys/fs/x')).toBe(
      "path '/sys/fs/x' is inside the sandbox's /sys",
    )
    expect(volumeMountPathProblem('/dev/shm')).toBe("path '/dev/shm' is inside the sandbox's /dev")
    expect(volumeMountPathProblem('/.sandbar/bin')).toBe(
      "path '/.sandbar/bin' is inside the sandbox's /.sandbar",
    )
  })
})

describe('normalVolumeMountPath', () => {
  it('drops repeated and trailing slashes', () => {
    expect(normalVolumeMountPath('//data//cache/')).toBe('/data/cache')
    expect(normalVolumeMountPath('/')).toBe('/')
  })
})

describe('volumeMountPathProblems', () => {
  it('names each bad entry by index, a repeat by the later one', () => {
    expect(volumeMountPathProblems(['/data', '/dev', '/data/', '/cache'])).toEqual([
      { index: 1, reason: "path '/dev' would hide the sandbox's /dev" },
      { index: 2, reason: "path '/data/' is already used" },
    ])
    expect(volumeMountPathProblems([])).toEqual([])
  })
})

describe('checkVolumeMounts', () => {
  it('takes distinct good paths, nested ones included', () => {
    expect(() =>
      checkVolumeMounts([
        { path: '/data', hostDir: '/v/a' },
        { path: '/data/cache', hostDir: '/v/b' },
      ]),
    ).not.toThrow()
  })

  it('lists every bad mount at once, as the wire contract words a 400', () => {
    const check = () =>
      checkVolumeMounts([
        { path: '/data', hostDir: '/v/a' },
        { path: '/proc', hostDir: '/v/b' },
        { path: '/data/', hostDir: '/v/c' },
        { path: 'x', hostDir: '/v/d' },
      ])
    expect(check).toThrow(VolumeMountError)
    expect(check).toThrow(
      [
        'invalid mounts:',
        "\t- volume mount #1: path '/proc' would hide the sandbox's /proc",
        "\t- volume mount #2: path '/data/' is already used",
        '\t- volume mount #3: path must be absolute',
      ].join('\n'),
    )
  })
})
