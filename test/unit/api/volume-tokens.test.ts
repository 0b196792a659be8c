import { randomBytes } from 'node:crypto'
import { decodeJwt, SignJWT, UnsecuredJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { VolumeTokenError, VolumeTokens } from '../../../src/api/volume-tokens.js'

const key = randomBytes(32)
const audience = 'https://api.sandbar.test'
const grant = { teamID: 'team-1', volumeID: '0b7f8a5e-1c2d-4e3f-8a9b-0c1d2e3f4a5b' }

/** The message a verify fails with. */
async function refusal(tokens: VolumeTokens, token: string): Promise<string> {
  const error = await tokens.verify(token).then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  if (!(error instanceof VolumeTokenError)) throw new Error(`expected a refusal, got ${error}`)
  return error.message
}

describe('VolumeTokens', () => {
  it("mints the contract's claims and verifies its own tokens", async () => {
    const tokens = new VolumeTokens(key, audience, 3600)
    const token = await tokens.mint(grant)
    const claims = decodeJwt(token)
    expect(claims).toMatchObject({
      aud: audience,
      iss: 'sandbar',
      sub: 'team-1',
      teamid: 'team-1',
      volid: grant.volumeID,
      voltype: 'local',
    })
    expect(Number(claims.exp) - Number(claims.iat)).toBe(3600)
    expect(await tokens.verify(token)).toEqual(grant)
  })

  it('refuses expired tokens, other audiences, other keys, unsigned and tampered ones', async () => {
    const tokens = new VolumeTokens(key, audience, 3600)
    const expired = await new VolumeTokens(key, audience, -10).mint(grant)
    expect(await refusal(tokens, expired)).toBe('the volume token has expired')
    const elsewhere = await new VolumeTokens(key, 'https://api.other.test', 3600).mint(grant)
    expect(await refusal(tokens, elsewhere)).toBe('invalid volume token')
    const otherKey = await new VolumeTokens(randomBytes(32), audience, 3600).mint(grant)
    expect(await refusal(tokens, otherKey)).toBe('invalid volume token')
    const unsigned = new UnsecuredJWT({ teamid: 'team-1', volid: grant.volumeID, voltype: 'local' })
      .setAudience(audience)
      .setIssuer('sandbar')
      .setSubject('team-1')
      .setExpirationTime('1h')
      .encode()
    expect(await refusal(tokens, unsigned)).toBe('invalid volume token')
    const [header, , signature] = (await tokens.mint(grant)).split('.')
    const payload = Buffer.from(JSON.stringify({ ...decodeJwt(expired), volid: 'other' })).toString(
      'base64url',
    )
    expect(await refusal(tokens, `${header}.${payload}.${signature}`)).toBe('invalid volume token')
    expect(await refusal(tokens, 'not-a-jwt')).toBe('invalid volume token')
  })

  it('refuses a token of this key whose team claims disagree', async () => {
    const tokens = new VolumeTokens(key, audience, 3600)
    const header = decodeJwt(await tokens.mint(grant))
    const mixed = await new SignJWT({ teamid: 'team-2', volid: grant.volumeID, voltype: 'local' })
      .setProtectedHeader({ alg: 'HS256', kid: keyNameOf(await tokens.mint(grant)) })
      .setIssuer('sandbar')
      .setAudience(audience)
      .setSubject('team-1')
      .setIssuedAt()
      .setNotBefore(Number(header.iat))
      .setExpirationTime('1h')
      .setJti('x')
      .sign(key)
    expect(await refusal(tokens, mixed)).toBe('invalid volume token')
  })
})

function keyNameOf(token: string): string {
  const [header = ''] = token.split('.')
  return (JSON.parse(Buffer.from(header, 'base64url').toString()) as { kid: string }).kid
}
