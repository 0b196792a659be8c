import { chown, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { UNAUTHORIZED_MESSAGE } from '../../../../src/envd/auth.js'
import { fileSignature } from '../../../../src/envd/http/file-signature.js'
import {
  type FileRoutesFixture,
  fileRoutesFixture,
  filesUrl,
  USER_UID,
} from './file-routes-fixture.js'

const TOKEN = 'sbt-token'
let fx: FileRoutesFixture
beforeEach(async () => {
  fx = await fileRoutesFixture()
  fx.state.applyInit({ accessToken: TOKEN })
  await writeFile(path.join(fx.userHome, 'a.txt'), 'signed')
  await chown(path.join(fx.userHome, 'a.txt'), USER_UID, USER_UID)
})
afterEach(() => fx.cleanup())

async function status(query: Record<string, string>, init: RequestInit = {}) {
  const response = await fx.request(filesUrl(query), init)
  return { status: response.status, body: await response.text() }
}

function signed(
  operation: 'read' | 'write',
  extra: Record<string, string> = {},
  expiration?: number,
) {
  const query: Record<string, string> = { path: 'a.txt', ...extra }
  query.signature = fileSignature({
    path: 'a.txt',
    operation,
    username: extra.username ?? '',
    accessToken: TOKEN,
    expiration,
  })
  if (expiration !== undefined) query.signature_expiration = String(expiration)
  return query
}

const now = () => Math.floor(Date.now() / 1000)

describe('/files authorization with an access token set', () => {
  it('accepts the right X-Access-Token and rejects a wrong one', async () => {
    expect(await status({ path: 'a.txt' }, { headers: { 'X-Access-Token': TOKEN } })).toEqual({
      status: 200,
      body: 'signed',
    })
    const wrong = await status({ path: 'a.txt' }, { headers: { 'X-Access-Token': 'nope' } })
    expect(wrong).toEqual({
      status: 401,
      body: JSON.stringify({ code: 401, message: UNAUTHORIZED_MESSAGE }),
    })
  })

  it('requires a signature without the header', async () => {
    expect(await status({ path: 'a.txt' })).toEqual({
      status: 401,
      body: JSON.stringify({ code: 401, message: 'missing signature query parameter' }),
    })
  })

  it('accepts a valid signature, with or without an expiration and a username', async () => {
    expect((await status(signed('read'))).body).toBe('signed')
    expect((await status(signed('read', {}, now() + 60))).body).toBe('signed')
    expect((await status(signed('read', { username: 'user' }))).body).toBe('signed')
  })

  it('rejects an expired, tampered or wrong-operation signature', async () => {
    const expired = await status(signed('read', {}, now() - 10))
    expect(expired).toEqual({
      status: 401,
      body: JSON.stringify({ code: 401, message: 'signature is already expired' }),
    })
    const longer = { ...signed('read', {}, now() - 10), signature_expiration: String(now() + 999) }
    expect(JSON.parse((await status(longer)).body).message).toBe('invalid signature')
    expect((await status({ ...signed('read'), path: 'b.txt' })).status).toBe(401)
    expect((await status({ ...signed('read'), username: 'root' })).status).toBe(401)
    expect((await status(signed('write'))).status).toBe(401)
  })

  it('signs uploads with the write operation', async () => {
    const body = new FormData()
    body.append('file', new Blob(['up']), 'a.txt')
    const upload = await status(signed('write'), { method: 'POST', body })
    expect(upload.status).toBe(200)
    const reused = await status(signed('read'), { method: 'POST', body })
    expect(reused.status).toBe(401)
  })

  it('needs nothing once the token is cleared', async () => {
    fx.state.accessToken = undefined
    expect((await status({ path: 'a.txt' })).body).toBe('signed')
  })
})
