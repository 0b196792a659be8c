import { randomBytes } from 'node:crypto'
import { AuthenticationError } from 'e2b'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import {
  ENVD_TEST_PORTS,
  initEnvd,
  type NamespacedEnvd,
  startNamespacedEnvd,
  TEST_USER,
} from '../envd-namespace.js'
import { sandboxForEnvd } from '../setup.js'

/** Wire contract §3.2: the body of every refused `X-Access-Token`. */
const UNAUTHORIZED = {
  code: 401,
  message:
    'unauthorized access, please provide a valid access token or method signing if supported',
}

const TOKEN = randomBytes(16).toString('hex')
let envd: NamespacedEnvd
beforeAll(async () => {
  envd = await startNamespacedEnvd(ENVD_TEST_PORTS.auth, inject('envdBundle'))
  await initEnvd(envd.url, { accessToken: TOKEN })
})
afterAll(() => envd?.stop())

async function answer(route: string, init: RequestInit = {}) {
  const response = await fetch(`${envd.url}${route}`, init)
  const text = await response.text()
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) }
}

describe('envd access token (X-Access-Token)', () => {
  it('lets the right token through commands, filesystem RPCs and /files', async () => {
    const sandbox = sandboxForEnvd(envd.url, TOKEN)
    expect((await sandbox.commands.run('echo authorized')).stdout).toBe('authorized\n')
    await sandbox.files.write('token.txt', 'with token')
    expect(await sandbox.files.read('token.txt')).toBe('with token')
    expect((await sandbox.files.list('.')).map((e) => e.name)).toContain('token.txt')
  })

  for (const [label, token] of [
    ['a wrong token', 'not-the-token'],
    ['no token', undefined],
  ] as const) {
    it(`refuses ${label} with AuthenticationError on every SDK surface`, async () => {
      const sandbox = sandboxForEnvd(envd.url, token)
      await expect(sandbox.commands.run('echo no')).rejects.toBeInstanceOf(AuthenticationError)
      await expect(sandbox.commands.list()).rejects.toBeInstanceOf(AuthenticationError)
      await expect(sandbox.files.list('.')).rejects.toBeInstanceOf(AuthenticationError)
      await expect(sandbox.files.makeDir('nope')).rejects.toBeInstanceOf(AuthenticationError)
      await expect(sandbox.files.read('token.txt')).rejects.toBeInstanceOf(AuthenticationError)
      await expect(sandbox.files.write('x.txt', 'x')).rejects.toBeInstanceOf(AuthenticationError)
    })
  }

  it('answers the contract text on the gated HTTP routes', async () => {
    for (const route of ['/envs', '/metrics']) {
      expect(await answer(route)).toEqual({ status: 401, body: UNAUTHORIZED })
      expect(await answer(route, { headers: { 'X-Access-Token': 'wrong' } })).toEqual({
        status: 401,
        body: UNAUTHORIZED,
      })
      expect((await answer(route, { headers: { 'X-Access-Token': TOKEN } })).status).toBe(200)
    }
    const compose = { method: 'POST', body: '{"source_paths":["a"],"destination":"b"}' }
    expect(await answer('/files/compose', compose)).toEqual({ status: 401, body: UNAUTHORIZED })
    expect(
      await answer('/files?path=token.txt', { headers: { 'X-Access-Token': 'wrong' } }),
    ).toEqual({
      status: 401,
      body: UNAUTHORIZED,
    })
  })

  it('leaves /health open', async () => {
    expect((await fetch(`${envd.url}/health`)).status).toBe(204)
  })

  it('refuses /init with a different token once one is set', async () => {
    await expect(initEnvd(envd.url, { accessToken: 'another-token' })).rejects.toThrow(/401/)
    await expect(initEnvd(envd.url, {})).rejects.toThrow(/401/)
    const sandbox = sandboxForEnvd(envd.url, TOKEN)
    expect((await sandbox.commands.run('echo still')).stdout).toBe('still\n')
    await initEnvd(envd.url, { accessToken: TOKEN, envVars: { SBT_AUTH: 'kept' } })
    const envs = await answer('/envs', { headers: { 'X-Access-Token': TOKEN } })
    expect(envs.body).toMatchObject({ SBT_AUTH: 'kept' })
    expect((await sandbox.commands.run('whoami')).stdout).toBe(`${TEST_USER.name}\n`)
  })
})
