import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { RegistryAuth } from '../index.js'
import { ecrLogin } from './ecr-login.js'

/** A user name and password for a registry's basic (or token) auth. */
export interface RegistryLogin {
  username: string
  password: string
}

/**
 * The login each kind of credentials stands for: `registry` as given; `gcp` is Google's
 * documented `_json_key` user with the service account's JSON key as password; `aws` asks ECR
 * for a temporary login.
 */
export async function registryLogin(
  auth: RegistryAuth,
  askEcr: typeof ecrLogin = ecrLogin,
): Promise<RegistryLogin> {
  switch (auth.type) {
    case 'registry':
      return { username: auth.username, password: auth.password }
    case 'gcp':
      return { username: '_json_key', password: auth.serviceAccountJson }
    case 'aws':
      return askEcr(auth)
  }
}

/**
 * The containers-auth.json(5) text that logs into `registry` (the same format as Docker's
 * config.json `auths`).
 */
export function authFileText(registry: string, login: RegistryLogin): string {
  const auth = Buffer.from(`${login.username}:${login.password}`).toString('base64')
  return `${JSON.stringify({ auths: { [registry]: { auth } } })}\n`
}

/**
 * Writes the auth file skopeo reads with `--authfile` into `dir` (a directory only the service
 * reaches), readable by its owner alone: credentials never go on a command line, where any
 * host user could read them in `ps`.
 */
export async function writeAuthFile(
  dir: string,
  registry: string,
  login: RegistryLogin,
): Promise<string> {
  const file = path.join(dir, 'auth.json')
  await writeFile(file, authFileText(registry, login), { mode: 0o600, flag: 'wx' })
  return file
}
