import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi, freePort } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

const call = (method: string, path: string, body?: unknown) =>
  callApi(serve.client, method, path, body)

// The second slice of wire contract §1.2–§1.4: v1 list, refreshes, legacy resume, network
// updates, metrics, and sandboxes that survive a crash of the service. One sandbox serves the
// whole file; the restart comes last.

let serve: ServeInstance
let sandbox: Sandbox
const opts = () => ({ ...serve.client })

beforeAll(async () => {
  serve = await startServe()
  sandbox = await Sandbox.create({ ...opts(), metadata: { suite: 'operations' } })
  await sandbox.setTimeout(300_000)
})

afterAll(async () => {
  if (sandbox !== undefined) await Sandbox.kill(sandbox.sandboxId, opts())
  const leaks = await serve?.stop()
  expect(leaks).toEqual([])
})

const badRequest = (message: string) => ({ status: 400, body: { code: 400, message } })
const endAt = async () =>
  Date.parse((await call('GET', `/sandboxes/${sandbox.sandboxId}`)).body.endAt)

describe('GET /sandboxes (v1)', () => {
  it('lists running sandboxes, filtered by metadata', async () => {
    const listed = await call(
      'GET',
      `/sandboxes?metadata=${encodeURIComponent('suite=operations')}`,
    )
    expect(listed.status).toBe(200)
    expect(listed.body).toEqual([
      expect.objectContaining({
        sandboxID: sandbox.sandboxId,
        templateID: 'base',
        clientID: '6532622b',
        state: 'running',
        metadata: { suite: 'operations' },
      }),
    ])
    const none = await call('GET', `/sandboxes?metadata=${encodeURIComponent('suite=other')}`)
    expect(none.body).toEqual([])
  })
})

describe('metrics', () => {
  it('gives the SDK a sample of the sandbox', async () => {
    // The first sample is taken just after create, without holding it up.
    await expect
      .poll(async () => (await sandbox.getMetrics()).length, { timeout: 10_000, interval: 100 })
      .toBeGreaterThanOrEqual(1)
    const [metric] = await sandbox.getMetrics()
    // The sandbox's own CPUs and memory, not the host's.
    const { cpuCount, memoryMB } = await sandbox.getInfo()
    expect(metric?.cpuCount).toBe(cpuCount)
    expect(metric?.memTotal).toBe(memoryMB * 1024 * 1024)
    expect(metric?.memUsed).toBeGreaterThan(0)
    expect(metric?.memUsed).toBeLessThan(memoryMB * 1024 * 1024)
    expect(metric?.diskTotal).toBeGreaterThan(0)
    expect(metric?.timestamp).toBeInstanceOf(Date)
  })

  it('keeps sampling, and answers the series within a range', async () => {
    const before = await sandbox.getMetrics()
    // The telemetry loop samples every 5 s.
    await expect
      .poll(async () => (await sandbox.getMetrics()).length, { timeout: 15_000, interval: 500 })
      .toBeGreaterThan(before.length)
    const series = await sandbox.getMetrics()
    const times = series.map((metric) => metric.timestamp.getTime())
    expect(times).toEqual([...times].sort((a, b) => a - b))
    const last = series.at(-1)?.timestamp ?? new Date()
    const recent = await sandbox.getMetrics({ start: last, end: new Date(last.getTime() + 60_000) })
    expect(recent.map((metric) => metric.timestamp)).toEqual(
      series.filter((metric) => metric.timestamp >= last).map((metric) => metric.timestamp),
    )
    const first = series[0]?.timestamp ?? last
    expect(await sandbox.getMetrics({ end: new Date(first.getTime() - 1000) })).toEqual([])
  })

  it('samples many sandboxes, leaving out unknown ones', async () => {
    const id = sandbox.sandboxId
    const answer = await call('GET', `/sandboxes/metrics?sandbox_ids=${id},iunknownsandbox000000`)
    expect(answer.status).toBe(200)
    expect(Object.keys(answer.body.sandboxes)).toEqual([id])
    expect(answer.body.sandboxes[id]).toEqual({
      timestamp: expect.any(String),
      timestampUnix: expect.any(Number),
      cpuCount: expect.any(Number),
      cpuUsedPct: expect.any(Number),
      memUsed: expect.any(Number),
      memTotal: expect.any(Number),
      memCache: expect.any(Number),
      diskUsed: expect.any(Number),
      diskTotal: expect.any(Number),
    })
    expect((await call('GET', '/sandboxes/metrics')).status).toBe(400)
    expect(await call('GET', `/sandboxes/metrics?sandbox_ids=${id},${id}`)).toEqual(
      badRequest('validation error: sandbox_ids must be unique'),
    )
  })
})

describe('POST /sandboxes/{id}/refreshes', () => {
  it('extends the timeout and never shortens it', async () => {
    const path = `/sandboxes/${sandbox.sandboxId}/refreshes`
    const before = await endAt()
    expect((await call('POST', path, { duration: 15 })).status).toBe(204)
    expect(await endAt()).toBe(before)
    expect((await call('POST', path, { duration: 600 })).status).toBe(204)
    expect(await endAt()).toBeGreaterThan(before)
    expect((await call('POST', path, { duration: 3601 })).status).toBe(400)
    expect((await call('POST', '/sandboxes/iunknownsandbox000000/refreshes')).status).toBe(404)
  })
})

describe('PUT /sandboxes/{id}/network', () => {
  it('replaces the egress rules live and keeps them', async () => {
    await sandbox.updateNetwork({ allowOut: ['1.1.1.1'], denyOut: ['10.1.2.0/24'] })
    const detail = await call('GET', `/sandboxes/${sandbox.sandboxId}`)
    expect(detail.body.network).toMatchObject({ allowOut: ['1.1.1.1'], denyOut: ['10.1.2.0/24'] })
    await sandbox.updateNetwork({})
    const cleared = await call('GET', `/sandboxes/${sandbox.sandboxId}`)
    expect(cleared.body.network).toMatchObject({ allowOut: [], denyOut: [] })
    expect((await sandbox.commands.run('echo still')).stdout).toBe('still\n')
  })

  it('rejects bad rules with the contract text', async () => {
    const path = `/sandboxes/${sandbox.sandboxId}/network`
    await expect(sandbox.updateNetwork({ denyOut: ['nope'] })).rejects.toThrow(
      'invalid denied CIDR nope',
    )
    expect(await call('PUT', path, { allowOut: ['example.com'] })).toEqual(
      badRequest(
        "When specifying allowed domains in allow out, you must include 'ALL_TRAFFIC' in deny out to block all other traffic.",
      ),
    )
    const domain = await call('PUT', path, { allowOut: ['example.com'], denyOut: ['0.0.0.0/0'] })
    expect(domain.status).toBe(400)
    expect(domain.body.message).toMatch(/^invalid allowed CIDR example\.com/)
  })

  it('rejects a bad create network with a 400', async () => {
    const create = (network: unknown) => call('POST', '/sandboxes', { templateID: 'base', network })
    expect(await create({ denyOut: ['300.1.1.1'] })).toEqual(
      badRequest('invalid denied CIDR 300.1.1.1'),
    )
    expect(await create({ denyOut: ['0.0.0.0'] })).toEqual(
      badRequest('invalid denied CIDR 0.0.0.0'),
    )
  })
})

describe('POST /sandboxes/{id}/resume (legacy)', () => {
  it('refuses a running sandbox and resumes a paused one', async () => {
    const id = sandbox.sandboxId
    expect(await call('POST', `/sandboxes/${id}/resume`)).toEqual({
      status: 409,
      body: { code: 409, message: `Sandbox ${id} is already running` },
    })
    expect(await sandbox.pause()).toBe(true)
    expect(await call('PUT', `/sandboxes/${id}/network`, {})).toEqual({
      status: 409,
      body: { code: 409, message: `Sandbox "${id}" is not running` },
    })
    const resumed = await call('POST', `/sandboxes/${id}/resume`, { timeout: 300 })
    expect(resumed.status).toBe(201)
    expect(resumed.body).toMatchObject({ sandboxID: id, templateID: 'base' })
    expect((await sandbox.commands.run('echo resumed')).stdout).toBe('resumed\n')
  })
})

describe('restart', () => {
  it('refuses a second serve on its data directory, and keeps its own sandboxes', async () => {
    const ports = new Map([
      ['--api-port', String(await freePort())],
      ['--proxy-port', String(await freePort())],
    ])
    const args = serve.args.map((arg, i) => ports.get(serve.args[i - 1] ?? '') ?? arg)
    const second = await promisify(execFile)(process.execPath, args, { timeout: 60_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: unknown; stderr: string }) => error,
    )
    expect(second.code).toBe(1)
    expect(second.stderr).toBe(
      `sandbar serve: another sandbar serve is using ${serve.dataDir}: stop it first, or give this one its own --data-dir\n`,
    )
    expect((await sandbox.commands.run('echo still')).stdout).toBe('still\n')
  })

  it('keeps sandboxes usable across a SIGKILL of sandbar serve', async () => {
    await sandbox.files.write('/home/user/before-crash.txt', 'kept')
    await serve.crashAndRestart()
    const again = await Sandbox.connect(sandbox.sandboxId, opts())
    expect((await again.commands.run('echo after')).stdout).toBe('after\n')
    expect(await again.files.read('/home/user/before-crash.txt')).toBe('kept')
    expect((await again.getMetrics()).length).toBeGreaterThanOrEqual(1)
  })
})
