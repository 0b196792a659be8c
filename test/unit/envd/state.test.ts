import { describe, expect, it } from 'vitest'
import { EnvdState } from '../../../src/envd/state.js'

describe('EnvdState.applyInit', () => {
  it('replaces env vars instead of merging them', () => {
    const state = new EnvdState({ E2B_SANDBOX: 'true' })
    state.applyInit({ envVars: { A: '1', B: '2' } })
    state.applyInit({ envVars: { B: '3' } })
    expect(state.defaultEnv()).toEqual({ E2B_SANDBOX: 'true', B: '3' })
  })

  it('lets /init env vars override the sandbox variables', () => {
    const state = new EnvdState({ E2B_SANDBOX: 'true' })
    state.applyInit({ envVars: { E2B_SANDBOX: 'custom' } })
    expect(state.defaultEnv()).toEqual({ E2B_SANDBOX: 'custom' })
  })

  it('sets the token once; later pushes must carry it', () => {
    const state = new EnvdState({})
    expect(state.applyInit({ accessToken: 't1', defaultUser: 'user' })).toBe('applied')
    expect(state.applyInit({ accessToken: 't2', defaultUser: 'root' })).toBe('unauthorized')
    expect(state.applyInit({ defaultUser: 'root' })).toBe('unauthorized')
    expect(state.defaultUser).toBe('user')
    expect(state.isAccessToken('t1')).toBe(true)
    expect(state.applyInit({ accessToken: 't1', defaultWorkdir: '/code' })).toBe('applied')
    expect(state.defaultWorkdir).toBe('/code')
  })

  it('acknowledges a stale push without applying it', () => {
    const state = new EnvdState({})
    state.applyInit({ timestamp: '2026-01-01T00:00:10Z', envVars: { NEW: '1' } })
    expect(state.applyInit({ timestamp: '2026-01-01T00:00:05Z', envVars: { OLD: '1' } })).toBe(
      'stale',
    )
    expect(state.envVars).toEqual({ NEW: '1' })
  })

  it('compares tokens of different lengths safely', () => {
    const state = new EnvdState({})
    state.applyInit({ accessToken: 'abc' })
    expect(state.isAccessToken('abcd')).toBe(false)
    expect(state.isAccessToken(undefined)).toBe(false)
  })
})
