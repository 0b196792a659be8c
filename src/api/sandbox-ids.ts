import { randomBytes, randomInt } from 'node:crypto'
import { apiErrors } from './errors.js'

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz1234567890'

/** Wire contract §1.1: `"i"` + 20 chars from `[a-z0-9]`. */
export function newSandboxID(): string {
  let id = 'i'
  for (let i = 0; i < 20; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)]
  return id
}

/** Wire contract §1.1: a template ID is 20 chars from `[a-z0-9]`, no prefix. */
export function newTemplateID(): string {
  let id = ''
  for (let i = 0; i < 20; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)]
  return id
}

/** An unguessable token; stored, so it stays the same across pause/resume (§1.4 Tokens). */
export function newAccessToken(): string {
  return randomBytes(32).toString('hex')
}

/**
 * The sandbox ID in a path (wire contract §1.1 "ShortID"): split on `-`; more than two parts
 * is `400 "Invalid sandbox ID"`; with two, the first is the ID (legacy `<id>-<clientID>`).
 */
export function sandboxIDFromPath(param: string): string {
  const parts = param.split('-')
  const [id] = parts
  if (parts.length > 2 || id === undefined) throw apiErrors.invalidSandboxID()
  return id
}
