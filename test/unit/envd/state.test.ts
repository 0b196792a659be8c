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

  it("takes a restored snapshot's new identity from the agent's push alone", () => {
    const oldSecret = 'o'.repeat(32)
    const newSecret = 'n'.repeat(32)
    const handed = new EnvdState({ E2B_SANDBOX_ID: 'source' }, { controlSecret: oldSecret })
    handed.applyInit({ sandboxID: 'fork', controlSecret: newSecret })
    expect(handed.defaultEnv().E2B_SANDBOX_ID).toBe('fork')
    expect(handed.mayInit(oldSecret)).toBe(false)
    expect(handed.mayInit(newSecret)).toBe(true)
    // Without a handover anyone may push /init: its identity stays as envd started.
    const open = new EnvdState({ E2B_SANDBOX_ID: 'host' })
    open.applyInit({ sandboxID: 'forged', controlSecret: newSecret })
    expect(open.defaultEnv().E2B_SANDBOX_ID).toBe('host')
    expect(open.mayInit(undefined)).toBe(true)
  })
})
