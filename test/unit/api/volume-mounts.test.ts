import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../src/api/errors.js'
import { resolveVolumeMounts } from '../../../src/api/volume-mounts.js'

const VOLUMES = new Map([
  ['data', '0b6f3a1e-5d0c-4f7e-9a3b-1c2d3e4f5a6b'],
  ['cache', '7d1e2f3a-4b5c-4d6e-8f9a-0b1c2d3e4f5a'],
])

function refusal(mounts: { name: string; path: string }[]): ApiError {
  try {
    resolveVolumeMounts(mounts, VOLUMES)
  } catch (error) {
    if (error instanceof ApiError) return error
    throw error
  }
  throw new Error('the mounts were accepted')
}

describe('volume mounts on create', () => {
  it('resolves names to the team’s volumes, keeping the order asked for', () => {
    expect(
      resolveVolumeMounts(
        [
          { name: 'cache', path: '/home/user/.cache' },
          { name: 'data', path: '/data' },
        ],
        VOLUMES,
      ),
    ).toEqual([
      {
        volumeID: '7d1e2f3a-4b5c-4d6e-8f9a-0b1c2d3e4f5a',
        name: 'cache',
        path: '/home/user/.cache',
      },
      { volumeID: '0b6f3a1e-5d0c-4f7e-9a3b-1c2d3e4f5a6b', name: 'data', path: '/data' },
    ])
  })

  it('lists every bad entry with its index in E2B’s words', () => {
    const error = refusal([
      { name: 'missing', path: '/a' },
      { name: 'data', path: '' },
      { name: 'data', path: 'relative' },
      { name: 'data', path: '/data/../etc' },
      { name: 'data', path: '/ok' },
      { name: 'cache', path: '/ok' },
    ])
    expect(error.status).toBe(400)
    expect(error.message).toBe(
      [
        'invalid mounts:',
        "\t- volume mount #0: volume 'missing' not found",
        '\t- volume mount #1: path cannot be empty',
        '\t- volume mount #2: path must be absolute',
        "\t- volume mount #3: path must not contain any '.' or '..' components",
        "\t- volume mount #5: path '/ok' is already used",
      ].join('\n'),
    )
  })

  it('refuses the root and the sandbox’s system directories', () => {
    const error = refusal([
      { name: 'data', path: '/' },
      { name: 'data', path: '/proc' },
      { name: 'data', path: '/.sandbar/envd' },
      { name: 'data', path: '/device' },
    ])
    expect(error.message).toBe(
      [
        'invalid mounts:',
        "\t- volume mount #0: path '/' is the sandbox's root",
        "\t- volume mount #1: path '/proc' would hide the sandbox's /proc",
        "\t- volume mount #2: path '/.sandbar/envd' is inside the sandbox's /.sandbar",
      ].join('\n'),
    )
  })
})
