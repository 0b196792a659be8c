import { describe, expect, it } from 'vitest'
import { passesTokenGate, usernameFromBasicAuth } from '../../../src/envd/auth.js'
import { EnvdState } from '../../../src/envd/state.js'

describe('usernameFromBasicAuth', () => {
  it('reads the user from base64("user:")', () => {
    const header = `Basic ${Buffer.from('user:').toString('base64')}`
    expect(usernameFromBasicAuth(header)).toBe('user')
  })

  it('ignores a password and tolerates a missing colon', () => {
    expect(usernameFromBasicAuth(`Basic ${Buffer.from('root:pw').toString('base64')}`)).toBe('root')
    expect(usernameFromBasicAuth(`basic ${Buffer.from('root').toString('base64')}`)).toBe('root')
  })

  it('returns undefined without a Basic header', () => {
    expect(usernameFromBasicAuth(undefined)).toBeUndefined()
    expect(usernameFromBasicAuth('Bearer abc')).toBeUndefined()
  })
})

describe('passesTokenGate', () => {
  it('lets everything through while no token is set', () => {
    expect(passesTokenGate(new EnvdState({}), 'POST', '/process.Process/List', undefined)).toBe(
      true,
    )
  })

  it('requires the token except on the open routes', () => {
    const state = new EnvdState({})
    state.applyInit({ accessToken: 'secret' })
    expect(passesTokenGate(state, 'GET', '/envs', undefined)).toBe(false)
    expect(passesTokenGate(state, 'GET', '/envs', 'wrong')).toBe(false)
    expect(passesTokenGate(state, 'GET', '/envs', 'secret')).toBe(true)
    for (const route of ['GET /health', 'GET /files', 'POST /files', 'POST /init']) {
      const [method = '', path = ''] = route.split(' ')
      expect(passesTokenGate(state, method, path, undefined)).toBe(true)
    }
    expect(passesTokenGate(state, 'POST', '/files/compose', undefined)).toBe(false)
  })
})
