import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../src/api/errors.js'
import { newAccessToken, newSandboxID, sandboxIDFromPath } from '../../../src/api/sandbox-ids.js'

describe('sandbox IDs (wire contract §1.1)', () => {
  it('are "i" and 20 characters of [a-z0-9]', () => {
    for (let i = 0; i < 50; i++) expect(newSandboxID()).toMatch(/^i[a-z0-9]{20}$/)
  })

  it('accept the legacy <id>-<clientID> form in paths', () => {
    expect(sandboxIDFromPath('iabc')).toBe('iabc')
    expect(sandboxIDFromPath('iabc-6532622b')).toBe('iabc')
  })

  it('refuse more than two parts with "Invalid sandbox ID"', () => {
    expect(() => sandboxIDFromPath('a-b-c')).toThrow(ApiError)
    expect(() => sandboxIDFromPath('a-b-c')).toThrow('Invalid sandbox ID')
  })

  it('come with unguessable access tokens', () => {
    expect(newAccessToken()).toMatch(/^[0-9a-f]{64}$/)
    expect(newAccessToken()).not.toBe(newAccessToken())
  })
})
