import { describe, expect, it } from 'vitest'
import {
  EgressPolicyError,
  parseEgressPolicy,
} from '../../../../src/agent/network/egress-policy.js'

function rejection(allowOut: string[], denyOut: string[]): EgressPolicyError {
  try {
    parseEgressPolicy({ allowOut, denyOut })
  } catch (error) {
    if (error instanceof EgressPolicyError) return error
    throw error
  }
  throw new Error('expected an EgressPolicyError')
}

describe('parseEgressPolicy', () => {
  it('turns bare IPs into /32 and clears host bits', () => {
    expect(
      parseEgressPolicy({ allowOut: ['1.2.3.4'], denyOut: ['10.1.2.3/8', ' 8.8.8.8 '] }),
    ).toEqual({
      allow: ['1.2.3.4/32'],
      deny: ['8.8.8.8/32', '10.0.0.0/8'],
    })
  })

  it('accepts 0.0.0.0/0, what allow_internet_access: false becomes (wire contract §4.5)', () => {
    expect(parseEgressPolicy({ allowOut: [], denyOut: ['0.0.0.0/0'] }).deny).toEqual(['0.0.0.0/0'])
  })

  it('drops entries another entry covers, which nft would call conflicting intervals', () => {
    const policy = { allowOut: [], denyOut: ['10.1.0.0/16', '10.0.0.0/8', '10.0.0.0/8', '9.0.0.1'] }
    expect(parseEgressPolicy(policy).deny).toEqual(['9.0.0.1/32', '10.0.0.0/8'])
  })

  it("rejects domains and garbage in denyOut with the wire contract's text", () => {
    for (const entry of [
      'example.com',
      '10.0.0.0/33',
      '256.1.1.1',
      '::/0',
      '01.2.3.4',
      '1.2.3.4/',
    ]) {
      const error = rejection([], [entry])
      expect(error.message).toBe(`invalid denied CIDR ${entry}`)
      expect(error.list).toBe('denyOut')
      expect(error.entry).toBe(entry)
    }
  })

  it('rejects the unspecified address except as 0.0.0.0/0', () => {
    expect(rejection([], ['0.0.0.0']).message).toBe('invalid denied CIDR 0.0.0.0')
    expect(rejection([], ['0.0.0.0/8']).entry).toBe('0.0.0.0/8')
  })

  it('rejects domains in allowOut: no domain filtering without a proxy', () => {
    const error = rejection(['*.example.com'], ['0.0.0.0/0'])
    expect(error.list).toBe('allowOut')
    expect(error.message).toBe(
      'invalid allowed CIDR *.example.com: allowOut entries must be IPv4 addresses or CIDRs',
    )
  })
})
