import { networkInterfaces } from 'node:os'
import { Sandbox, SandboxError } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_ADDRESS_POOL } from '../agent/agent-fixture.js'
import { callApi } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// Tenants stay apart (issue 9, item 1) through `sandbar serve` and the official SDK: no
// allowOut reaches another sandbox or the host, and one that names them is refused with
// E2B's error shape (§1.1) and a message that says why.

const ENVD_PORT = 49983
const BECAUSE = 'sandboxes never reach other sandboxes or the host'

let serve: ServeInstance
let a: Sandbox
let b: Sandbox
let bAddress: string
const opts = () => ({ ...serve.client })

/** The sandbox's own IPv4 address, as its eth0 shows it. */
async function addressOf(sandbox: Sandbox): Promise<string> {
  const shown = await sandbox.commands.run("ip -4 -o addr show eth0 | awk '{print $4}'")
  return shown.stdout.trim().replace(/\/\d+$/, '')
}

/** What curl inside `sandbox` gets from `url`: the HTTP status, or `blocked <curl exit>`. */
async function statusFrom(sandbox: Sandbox, url: string): Promise<string> {
  const command = `curl -s -o /dev/null -w '%{http_code}' --max-time 2 ${url} || echo " blocked $?"`
  return (await sandbox.commands.run(command)).stdout.trim()
}

/** A non-loopback IPv4 address of this host outside the pool: where api and proxy can listen. */
function hostAddress(): string {
  const poolStart = TEST_ADDRESS_POOL.split('.').slice(0, 2).join('.')
  const addresses = Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .filter((entry) => entry.family === 'IPv4' && !entry.internal)
    .map((entry) => entry.address)
    .filter((address) => !address.startsWith(`${poolStart}.`))
  const [first] = addresses
  if (first === undefined) throw new Error('the host has no IPv4 address outside loopback')
  return first
}

beforeAll(async () => {
  serve = await startServe()
  a = await Sandbox.create({ ...opts(), timeoutMs: 300_000 })
  b = await Sandbox.create({ ...opts(), timeoutMs: 300_000 })
  bAddress = await addressOf(b)
})

afterAll(async () => {
  for (const sandbox of [a, b])
    if (sandbox !== undefined) await Sandbox.kill(sandbox.sandboxId, opts())
  const leaks = await serve?.stop()
  expect(leaks).toEqual([])
})

describe('allowOut never opens other sandboxes or the host', () => {
  it('refuses create with an allowOut entry inside the pool, through the SDK and the API', async () => {
    const create = Sandbox.create({ ...opts(), network: { allowOut: [TEST_ADDRESS_POOL] } })
    await expect(create).rejects.toThrow(SandboxError)
    await expect(create).rejects.toThrow(
      `400: allowOut entry ${TEST_ADDRESS_POOL} overlaps the sandbox address pool ${TEST_ADDRESS_POOL}: ${BECAUSE}`,
    )
    const answer = await callApi(serve.client, 'POST', '/sandboxes', {
      templateID: 'base',
      network: { allowOut: ['1.1.1.1', bAddress] },
    })
    expect(answer).toEqual({
      status: 400,
      body: {
        code: 400,
        message: `allowOut entry ${bAddress} overlaps the sandbox address pool ${TEST_ADDRESS_POOL}: ${BECAUSE}`,
      },
    })
    const listed = await callApi(serve.client, 'GET', '/sandboxes')
    expect(listed.body.map((sandbox: { sandboxID: string }) => sandbox.sandboxID).sort()).toEqual(
      [a.sandboxId, b.sandboxId].sort(),
    )
  })

  it("refuses a network update naming another sandbox's address or the host", async () => {
    await expect(a.updateNetwork({ allowOut: [bAddress] })).rejects.toThrow(
      `400: allowOut entry ${bAddress} overlaps the sandbox address pool ${TEST_ADDRESS_POOL}: ${BECAUSE}`,
    )
    const host = hostAddress()
    const hostNetwork = `${host.replace(/\.\d+$/, '.0')}/24`
    const answer = await callApi(serve.client, 'PUT', `/sandboxes/${a.sandboxId}/network`, {
      allowOut: [hostNetwork],
    })
    expect(answer).toEqual({
      status: 400,
      body: {
        code: 400,
        message: `allowOut entry ${hostNetwork} overlaps the host address ${host}: ${BECAUSE}`,
      },
    })
  })

  it("cannot reach another sandbox's envd, whatever it tries", async () => {
    const health = `http://${bAddress}:${ENVD_PORT}/health`
    // The host (the service) reaches it; the test runs as root.
    expect((await fetch(health)).status).toBe(204)
    expect(await statusFrom(a, health)).toBe('000 blocked 28')
    // ALL_TRAFFIC is accepted and opens the internet, never the pool.
    await a.updateNetwork({ allowOut: ['0.0.0.0/0'] })
    expect(await statusFrom(a, health)).toBe('000 blocked 28')
    await a.updateNetwork({ allowOut: ['0.0.0.0/0'], denyOut: ['0.0.0.0/0'] })
    expect(await statusFrom(a, health)).toBe('000 blocked 28')
    await a.updateNetwork({})
  })
})
