import { randomBytes } from 'node:crypto'
import type { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import {
  ENVD_TEST_PORTS,
  initEnvd,
  type NamespacedEnvd,
  startNamespacedEnvd,
} from '../../envd-namespace.js'
import { sandboxForEnvd, uniqueName } from '../../setup.js'

/** A private envd with an access token, as a secure sandbox has (wire contract §3.2). */
let envd: NamespacedEnvd
let sandbox: Sandbox
beforeAll(async () => {
  envd = await startNamespacedEnvd(ENVD_TEST_PORTS.signedUrl, inject('envdBundle'))
  const accessToken = randomBytes(16).toString('hex')
  await initEnvd(envd.url, { accessToken })
  sandbox = sandboxForEnvd(envd.url, accessToken)
})
afterAll(() => envd?.stop())

async function fetchJson(
  url: string,
  init?: RequestInit,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, init)
  return { status: response.status, body: await response.json() }
}

function uploadForm(content: string, filename?: string): FormData {
  const form = new FormData()
  if (filename === undefined) form.append('file', content)
  else form.append('file', new Blob([content]), filename)
  return form
}

describe('signed file URLs', () => {
  it('downloads with a signature, with and without an expiration', async () => {
    const name = `${uniqueName()}.txt`
    await sandbox.files.write(name, 'signed content')
    for (const opts of [{}, { useSignatureExpiration: 10_000 }]) {
      const url = await sandbox.downloadUrl(name, opts)
      expect(new URL(url).searchParams.get('signature')).toMatch(/^v1_/)
      const response = await fetch(url)
      expect(response.status).toBe(200)
      expect(await response.text()).toBe('signed content')
    }
  })

  it('signs the decoded path, so spaces, plus signs and non-ASCII names work', async () => {
    const name = `${uniqueName()} a+b é.txt`
    await sandbox.files.write(name, 'odd name')
    const response = await fetch(await sandbox.downloadUrl(name))
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('odd name')
  })

  it('downloads as root with a signature naming root', async () => {
    const name = `${uniqueName()}.txt`
    await sandbox.files.write(name, 'root file', { user: 'root' })
    const url = await sandbox.downloadUrl(name, { user: 'root', useSignatureExpiration: 60 })
    expect(await (await fetch(url)).text()).toBe('root file')
  })

  it('uploads with a signature, to the path or to each part filename', async () => {
    const name = `${uniqueName()}.txt`
    const toPath = await fetchJson(await sandbox.uploadUrl(name), {
      method: 'POST',
      body: uploadForm('uploaded'),
    })
    expect(toPath).toEqual({
      status: 200,
      body: [{ name, path: `/home/user/${name}`, type: 'file' }],
    })
    expect(await sandbox.files.read(name)).toBe('uploaded')

    const dir = uniqueName()
    const toFilename = await fetchJson(await sandbox.uploadUrl(undefined, { user: 'root' }), {
      method: 'POST',
      body: uploadForm('as root', `~/${dir}/root.txt`),
    })
    expect(toFilename).toEqual({
      status: 200,
      body: [{ name: 'root.txt', path: `/root/${dir}/root.txt`, type: 'file' }],
    })
  })

  it('rejects an expired signature', async () => {
    const expired = { status: 401, body: { code: 401, message: 'signature is already expired' } }
    const download = await sandbox.downloadUrl('any.txt', { useSignatureExpiration: -10_000 })
    expect(await fetchJson(download)).toEqual(expired)
    const upload = await sandbox.uploadUrl('any.txt', { useSignatureExpiration: -10_000 })
    expect(await fetchJson(upload, { method: 'POST', body: uploadForm('x') })).toEqual(expired)
  })

  it('rejects a tampered signature, path, user, operation or expiration', async () => {
    const name = `${uniqueName()}.txt`
    await sandbox.files.write(name, 'guarded')
    const signed = new URL(await sandbox.downloadUrl(name, { useSignatureExpiration: 60 }))
    const tamper = async (change: (url: URL) => void, init?: RequestInit) => {
      const url = new URL(signed)
      change(url)
      return fetchJson(url.toString(), init)
    }
    const invalid = { status: 401, body: { code: 401, message: 'invalid signature' } }
    const signature = signed.searchParams.get('signature') ?? ''
    const flipped = signature.slice(0, -1) + (signature.endsWith('A') ? 'B' : 'A')
    expect(await tamper((u) => u.searchParams.set('signature', flipped))).toEqual(invalid)
    expect(await tamper((u) => u.searchParams.set('path', 'other.txt'))).toEqual(invalid)
    expect(await tamper((u) => u.searchParams.set('username', 'root'))).toEqual(invalid)
    const later = String(Number(signed.searchParams.get('signature_expiration')) + 3600)
    expect(await tamper((u) => u.searchParams.set('signature_expiration', later))).toEqual(invalid)
    const asUpload = { method: 'POST', body: uploadForm('overwrite') }
    expect(await tamper(() => undefined, asUpload)).toEqual(invalid)
    expect(await sandbox.files.read(name)).toBe('guarded')
  })

  it('requires a signature when no token is sent', async () => {
    expect(await fetchJson(`${envd.url}/files?path=any.txt`)).toEqual({
      status: 401,
      body: { code: 401, message: 'missing signature query parameter' },
    })
  })
})
