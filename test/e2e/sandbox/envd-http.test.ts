import type { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { z } from 'zod'
import {
  ENVD_TEST_PORTS,
  initEnvd,
  type NamespacedEnvd,
  startNamespacedEnvd,
} from '../envd-namespace.js'
import { sandboxForEnvd } from '../setup.js'

/** `/init` changes envd-wide state, so it is driven on a private envd (wire contract §3.3). */
let envd: NamespacedEnvd
let sandbox: Sandbox
beforeAll(async () => {
  envd = await startNamespacedEnvd(ENVD_TEST_PORTS.http, inject('envdBundle'))
  sandbox = sandboxForEnvd(envd.url)
})
afterAll(() => envd?.stop())

async function getJson(route: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${envd.url}${route}`)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  return z.record(z.string(), z.unknown()).parse(await response.json())
}

function postInit(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${envd.url}/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

describe('GET /health', () => {
  it('is 204 with no body, never cached', async () => {
    const response = await fetch(`${envd.url}/health`)
    expect(response.status).toBe(204)
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(await response.text()).toBe('')
  })
})

describe('GET /metrics', () => {
  it('reports snake_case resource figures of the right types', async () => {
    const metrics = await getJson('/metrics')
    const integers = ['ts', 'cpu_count', 'mem_total', 'mem_used', 'mem_cache', 'mem_total_mib']
    for (const key of [...integers, 'mem_used_mib', 'disk_used', 'disk_total']) {
      expect(Number.isInteger(metrics[key]), key).toBe(true)
    }
    const { ts, cpu_count, cpu_used_pct, mem_total, mem_used, mem_total_mib } = metrics
    const { disk_used, disk_total } = metrics
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(5)
    expect(cpu_count).toBeGreaterThanOrEqual(1)
    expect(typeof cpu_used_pct).toBe('number')
    expect(Number(cpu_used_pct)).toBeGreaterThanOrEqual(0)
    expect(Number(cpu_used_pct)).toBeLessThanOrEqual(100)
    // Rounded to two decimals, as E2B's envd reports it.
    expect(String(cpu_used_pct)).toMatch(/^\d+(\.\d{1,2})?$/)
    expect(Number(mem_used)).toBeLessThanOrEqual(Number(mem_total))
    expect(mem_total_mib).toBe(Math.floor(Number(mem_total) / 1024 / 1024))
    expect(Number(disk_used)).toBeGreaterThan(0)
    expect(Number(disk_used)).toBeLessThanOrEqual(Number(disk_total))
  })
})

describe('POST /init and GET /envs', () => {
  it('starts with the sandbox variables and root as the default user', async () => {
    expect(await getJson('/envs')).toEqual({ E2B_SANDBOX: 'true' })
    expect((await sandbox.commands.run('whoami')).stdout).toBe('root\n')
  })

  it('replaces env vars and sets the default user, visible to new processes', async () => {
    await initEnvd(envd.url, { envVars: { SBT_FIRST: 'one', SBT_SHARED: 'a' } })
    await initEnvd(envd.url, { envVars: { SBT_SECOND: 'two', SBT_SHARED: 'b' } })
    expect(await getJson('/envs')).toEqual({
      E2B_SANDBOX: 'true',
      SBT_SECOND: 'two',
      SBT_SHARED: 'b',
    })
    const echoed = await sandbox.commands.run(
      'echo "$SBT_FIRST|$SBT_SECOND|$SBT_SHARED|$E2B_SANDBOX"',
    )
    expect(echoed.stdout).toBe('|two|b|true\n')
    expect((await sandbox.commands.run('whoami')).stdout).toBe('user\n')
    expect((await sandbox.commands.run('pwd')).stdout).toBe('/home/user\n')
  })

  it('acknowledges a stale /init but changes nothing', async () => {
    await initEnvd(envd.url, { envVars: { SBT_CURRENT: 'now' } })
    const stale = await postInit({
      envVars: { SBT_STALE: 'old' },
      defaultUser: 'root',
      timestamp: new Date(Date.now() - 60_000).toISOString(),
    })
    expect(stale.status).toBe(204)
    expect(await getJson('/envs')).toEqual({ E2B_SANDBOX: 'true', SBT_CURRENT: 'now' })
    expect((await sandbox.commands.run('echo "[$SBT_STALE]"')).stdout).toBe('[]\n')
    expect((await sandbox.commands.run('whoami')).stdout).toBe('user\n')
  })

  it('answers 204 with the envd version header, and 400 to a malformed body', async () => {
    const response = await postInit({ timestamp: new Date().toISOString() })
    expect(response.status).toBe(204)
    expect(response.headers.get('x-envd-version')).toMatch(/^\d+\.\d+\.\d+/)
    const malformed = await fetch(`${envd.url}/init`, { method: 'POST', body: '{nope' })
    expect(malformed.status).toBe(400)
  })
})
