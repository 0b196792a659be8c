import { describe, expect, it } from 'vitest'
import { secretsEqual, trafficTokenVerdict } from '../../../src/proxy/traffic-token.js'

describe('trafficTokenVerdict', () => {
  it('is valid for the sandbox token', () => {
    expect(trafficTokenVerdict('tok-123', 'tok-123')).toBe('valid')
  })

  it('is missing without the header', () => {
    expect(trafficTokenVerdict('tok-123', undefined)).toBe('missing')
  })

  it.each(['', 'tok-12', 'tok-1234', 'TOK-123'])('is invalid for %j', (presented) => {
    expect(trafficTokenVerdict('tok-123', presented)).toBe('invalid')
  })

  it('is invalid for a repeated header', () => {
    expect(trafficTokenVerdict('tok-123', ['tok-123', 'tok-123'])).toBe('invalid')
  })
})

describe('secretsEqual', () => {
  it('compares secrets of any length', () => {
    expect(secretsEqual('a', 'a')).toBe(true)
    expect(secretsEqual('a', 'a'.repeat(1000))).toBe(false)
    expect(secretsEqual('', '')).toBe(true)
  })
})
