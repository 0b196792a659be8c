import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { chmod, readFile, writeFile } from 'node:fs/promises'
import { errnoCode } from '../errno-code.js'

/** Which token a sealed value holds; part of what the seal authenticates. */
export type TokenColumn = 'envd_access_token' | 'traffic_access_token'

const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16
/** Marks a sealed value; a new scheme would take a new marker. */
const SEALED_PREFIX = 'sealed1.'

/**
 * Seals sandbox tokens at rest (AES-256-GCM). The API must answer a sandbox's envd token again
 * on connect (wire contract §1.3 Sandbox) and the proxy must compare traffic tokens, so they
 * cannot be hashed; sealed, a copy of the database (a backup, a world-readable file from an
 * older install, a shared PostgreSQL) reveals no token without the key file. The sandbox ID
 * and the column are authenticated with each value, so a sealed token moved to another row
 * or column does not open.
 */
export class TokenSeal {
  constructor(private readonly key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`a token key has ${KEY_BYTES} bytes`)
  }

  seal(sandboxID: string, column: TokenColumn, token: string): string {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.key, iv)
    cipher.setAAD(Buffer.from(`${column}:${sandboxID}`))
    const sealed = Buffer.concat([
      cipher.update(token, 'utf8'),
      cipher.final(),
      cipher.getAuthTag(),
    ])
    return `${SEALED_PREFIX}${iv.toString('base64url')}.${sealed.toString('base64url')}`
  }

  /** The token, or throws when the value is not sealed or not sealed for this row and column. */
  open(sandboxID: string, column: TokenColumn, value: string): string {
    const [iv, sealed] = value.startsWith(SEALED_PREFIX)
      ? value.slice(SEALED_PREFIX.length).split('.')
      : []
    if (iv === undefined || sealed === undefined)
      throw new Error(`${column} of sandbox ${sandboxID} is not sealed`)
    const bytes = Buffer.from(sealed, 'base64url')
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'))
    decipher.setAAD(Buffer.from(`${column}:${sandboxID}`))
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
    const token = decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES))
    return Buffer.concat([token, decipher.final()]).toString('utf8')
  }

  /** Whether a stored value is sealed already (plaintext rows come from older installs). */
  static isSealed(value: string): boolean {
    return value.startsWith(SEALED_PREFIX)
  }
}

/**
 * The token key in `file` (0600, root's alone), made on first use. Every api instance on one
 * database needs the same file. A key made by two starts at once is settled by `wx`: the
 * loser reads the winner's.
 */
export async function loadTokenKey(file: string): Promise<Buffer> {
  const made = randomBytes(KEY_BYTES)
  await writeFile(file, made.toString('base64'), { mode: 0o600, flag: 'wx' }).catch(
    (error: unknown) => {
      if (!(errnoCode(error) === 'EEXIST')) throw error
    },
  )
  // An install from before this file, or a copy made with looser modes, is tightened here.
  await chmod(file, 0o600)
  const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64')
  if (key.length !== KEY_BYTES) throw new Error(`${file} does not hold a ${KEY_BYTES}-byte key`)
  return key
}
