import { describe, expect, it } from 'vitest'
import { DEFAULT_PATH, processEnv } from '../../../../src/envd/process/process-env.js'

const user = { name: 'user', home: '/home/user' }

describe('processEnv', () => {
  it('starts from PATH and the target user identity', () => {
    expect(processEnv({ envdPath: '/bin', user, defaults: {}, request: {} })).toEqual({
      PATH: '/bin',
      HOME: '/home/user',
      USER: 'user',
      LOGNAME: 'user',
    })
  })

  it("falls back to Debian's default PATH when envd has none", () => {
    expect(processEnv({ envdPath: undefined, user, defaults: {}, request: {} }).PATH).toBe(
      DEFAULT_PATH,
    )
    expect(processEnv({ envdPath: '', user, defaults: {}, request: {} }).PATH).toBe(DEFAULT_PATH)
  })

  it('lets envd defaults override the identity, and request envs override everything', () => {
    const env = processEnv({
      envdPath: '/bin',
      user,
      defaults: { E2B_SANDBOX: 'true', HOME: '/srv', FROM_INIT: 'init', SHARED: 'init' },
      request: { SHARED: 'request', PATH: '/custom', E2B_SANDBOX: 'false' },
    })
    expect(env).toEqual({
      PATH: '/custom',
      HOME: '/srv',
      USER: 'user',
      LOGNAME: 'user',
      E2B_SANDBOX: 'false',
      FROM_INIT: 'init',
      SHARED: 'request',
    })
  })
})
