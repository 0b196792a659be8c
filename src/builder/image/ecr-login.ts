import type { RegistryLogin } from './registry-login.js'

/** The part of GetAuthorizationToken's answer a login needs. */
export interface EcrAuthorizationData {
  authorizationToken?: string | undefined
}

/**
 * Turns an ECR authorization token into a registry login. AWS documents the token as base64 of
 * `user:password` (the user is always `AWS`), usable as Docker's basic auth for 12 hours.
 */
export function ecrLoginFromToken(
  data: readonly EcrAuthorizationData[] | undefined,
): RegistryLogin {
  const token = data?.[0]?.authorizationToken
  if (token === undefined || token === '') {
    throw new Error('AWS ECR returned no authorization token')
  }
  const decoded = Buffer.from(token, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon <= 0) throw new Error('AWS ECR returned an authorization token without user:password')
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

export interface AwsCredentials {
  awsAccessKeyId: string
  awsSecretAccessKey: string
  awsRegion: string
}

/** Asks ECR in the credentials' region for a registry login (GetAuthorizationToken). */
export async function ecrLogin(credentials: AwsCredentials): Promise<RegistryLogin> {
  // Loaded on first use: the SDK takes ~170 ms to load, which every start would pay otherwise.
  const { ECRClient, GetAuthorizationTokenCommand } = await import('@aws-sdk/client-ecr')
  const client = new ECRClient({
    region: credentials.awsRegion,
    credentials: {
      accessKeyId: credentials.awsAccessKeyId,
      secretAccessKey: credentials.awsSecretAccessKey,
    },
  })
  try {
    const answer = await client.send(new GetAuthorizationTokenCommand({}))
    return ecrLoginFromToken(answer.authorizationData)
  } finally {
    client.destroy()
  }
}
