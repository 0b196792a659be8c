import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ecrLoginFromToken } from '../../../../src/builder/image/ecr-login.js'
import {
  authFileText,
  registryLogin,
  writeAuthFile,
} from '../../../../src/builder/image/registry-login.js'

describe('registry logins', () => {
  it('uses registry credentials as they are', async () => {
    const login = await registryLogin({ type: 'registry', username: 'me', password: 'pw' })
    expect(login).toEqual({ username: 'me', password: 'pw' })
  })

  it('logs in to Google registries as _json_key with the service account JSON', async () => {
    const json = '{"type":"service_account","private_key":"-----BEGIN…"}'
    const login = await registryLogin({ type: 'gcp', serviceAccountJson: json })
    expect(login).toEqual({ username: '_json_key', password: json })
  })

  it('asks ECR with the AWS credentials', async () => {
    const asked: unknown[] = []
    const aws = {
      type: 'aws' as const,
      awsAccessKeyId: 'AKIA1',
      awsSecretAccessKey: 'secret',
      awsRegion: 'eu-west-1',
    }
    const login = await registryLogin(aws, async (credentials) => {
      asked.push(credentials)
      return { username: 'AWS', password: 'token' }
    })
    expect(asked).toEqual([aws])
    expect(login).toEqual({ username: 'AWS', password: 'token' })
  })

  it('turns an ECR authorization token into user and password', () => {
    const token = Buffer.from('AWS:eyJwYXlsb2FkIjoi:with:colons').toString('base64')
    expect(ecrLoginFromToken([{ authorizationToken: token }])).toEqual({
      username: 'AWS',
      password: 'eyJwYXlsb2FkIjoi:with:colons',
    })
    expect(() => ecrLoginFromToken([])).toThrow(/no authorization token/)
    const bad = Buffer.from('no-colon').toString('base64')
    expect(() => ecrLoginFromToken([{ authorizationToken: bad }])).toThrow(/user:password/)
  })

  it('writes a containers auth file only its owner reads', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'sbt-auth-'))
    try {
      const file = await writeAuthFile(dir, '127.0.0.1:5000', { username: 'u', password: 'p:w' })
      expect((await stat(file)).mode & 0o777).toBe(0o600)
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
        auths: { '127.0.0.1:5000': { auth: Buffer.from('u:p:w').toString('base64') } },
      })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
    expect(authFileText('docker.io', { username: 'a', password: 'b' })).toContain('"docker.io"')
  })
})
