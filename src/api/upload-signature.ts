import { createHmac, timingSafeEqual } from 'node:crypto'

/** How long an upload URL stays valid (§1.4: 30 min, as E2B's pre-signed URLs). */
export const UPLOAD_URL_LIFETIME_MS = 30 * 60 * 1000

/** What an upload URL lets its holder do: write this archive of this template until then. */
export interface UploadGrant {
  templateID: string
  hash: string
  /** Unix seconds. */
  expires: number
}

/**
 * Signs and checks upload URLs (§2.1 step 2). The URL carries no API key (the SDK PUTs it
 * bare, as it would to S3), so the HMAC over template, hash and expiry is its only credential.
 */
export class UploadSigner {
  constructor(private readonly key: Buffer) {}

  sign(grant: UploadGrant): string {
    return createHmac('sha256', this.key)
      .update(`${grant.templateID}\n${grant.hash}\n${grant.expires}`)
      .digest('hex')
  }

  /** Whether the signature is this grant's; the caller checks the expiry separately. */
  verify(grant: UploadGrant, signature: string): boolean {
    const expected = Buffer.from(this.sign(grant), 'hex')
    const given = Buffer.from(signature, 'hex')
    return given.length === expected.length && timingSafeEqual(given, expected)
  }
}

/** `https://api.<domain>` behind the proxy, `http://127.0.0.1:<port>` direct (§1.1 base URL). */
export function requestOrigin(url: string, headers: { host?: string; proto?: string }): string {
  const parsed = new URL(url)
  const proto = headers.proto?.split(',')[0]?.trim() || parsed.protocol.replace(/:$/, '')
  const host = headers.host || parsed.host
  return `${proto === 'https' ? 'https' : 'http'}://${host}`
}
