import { createHash, randomUUID } from 'node:crypto'
import { errors, jwtVerify, SignJWT } from 'jose'
import * as z from 'zod/mini'

/** The token's `iss`. */
const ISSUER = 'sandbar'
/** The token's `voltype`: where the volume's data lives (an image on the agent's host). */
const VOLUME_TYPE = 'local'
/** The only algorithm signed or accepted: a token naming another is refused unread. */
const ALGORITHM = 'HS256'

/** wave2-contracts §2.2: the claims the content API acts on. */
const claimsSchema = z.object({
  sub: z.string(),
  teamid: z.string(),
  volid: z.string(),
  voltype: z.string(),
})

/** Who a valid volume token lets in: one team, one volume. */
export interface VolumeGrant {
  teamID: string
  volumeID: string
}

/** A volume token that is missing, forged, expired or for another audience. */
export class VolumeTokenError extends Error {}

/**
 * Volume tokens (wave2-contracts §2.2): JWTs, HS256 with the service's 256-bit volume key,
 * `aud` = `https://api.<domain>`, `exp` `ttlSeconds` after `iat`/`nbf`, a fresh `jti`,
 * `sub` = `teamid` = the team, `volid` and `voltype`; headers `kid` and `tokid` name the
 * key (a digest of it, so a token signed by an earlier key is told apart before its signature
 * is checked). The SDK sends one as a bearer token on every content call.
 */
export class VolumeTokens {
  private readonly keyName: string

  constructor(
    private readonly key: Uint8Array,
    private readonly audience: string,
    private readonly ttlSeconds: number,
  ) {
    const digest = createHash('sha256').update(key).digest('hex')
    this.keyName = `sandbar-volume-${digest.slice(0, 16)}`
  }

  mint(grant: VolumeGrant): Promise<string> {
    const now = Math.floor(Date.now() / 1000)
    return new SignJWT({ teamid: grant.teamID, volid: grant.volumeID, voltype: VOLUME_TYPE })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT', kid: this.keyName, tokid: this.keyName })
      .setIssuer(ISSUER)
      .setAudience(this.audience)
      .setSubject(grant.teamID)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + this.ttlSeconds)
      .setJti(randomUUID())
      .sign(this.key)
  }

  /** The grant of a token this service signed and that is still valid; else VolumeTokenError. */
  async verify(token: string): Promise<VolumeGrant> {
    let payload: unknown
    try {
      const verified = await jwtVerify(token, this.key, {
        algorithms: [ALGORITHM],
        audience: this.audience,
        issuer: ISSUER,
        requiredClaims: ['exp', 'iat', 'nbf', 'jti', 'sub'],
      })
      if (verified.protectedHeader.kid !== this.keyName) {
        throw new VolumeTokenError('the volume token was signed with another key')
      }
      payload = verified.payload
    } catch (error) {
      if (error instanceof VolumeTokenError) throw error
      if (error instanceof errors.JWTExpired)
        throw new VolumeTokenError('the volume token has expired')
      throw new VolumeTokenError('invalid volume token')
    }
    const claims = claimsSchema.safeParse(payload)
    if (!claims.success || claims.data.sub !== claims.data.teamid) {
      throw new VolumeTokenError('invalid volume token')
    }
    return { teamID: claims.data.teamid, volumeID: claims.data.volid }
  }
}
