import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import type { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxInfo } from '../../src/agent/index.js'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import {
  sandboxRequest,
  startTestAgent,
  TEST_ADDRESS_POOL,
  type TestAgent,
} from './agent-fixture.js'
import { startTestNetworkHost, type TestNetworkHost } from './test-network-host.js'

const execFileAsync = promisify(execFile)

let test: TestAgent
let external: TestNetworkHost
let a: SandboxInfo
let b: SandboxInfo

const create = (egress = { allowOut: [] as string[], denyOut: [] as string[] }) =>
  test.agent.create(sandboxRequest({ egress }))

/** Exit code of an HTTP GET from inside the sandbox: 0 reached, anything else blocked. */
async function curl(sandbox: Sandbox, url: string): Promise<string> {
  const result = await sandbox.commands.run(`curl -s --max-time 2 ${url} || echo "blocked $?"`)
  return result.stdout
}

beforeAll(async () => {
  test = await startTestAgent()
  external = await startTestNetworkHost(test.config.prefix, randomBytes(1)[0] ?? 7)
  a = await create()
  b = await create()
})

afterAll(async () => {
  await external?.stop()
  expect(await test?.dispose()).toEqual([])
})

describe('sandbox networking', () => {
  it('reaches a private test host only when allowOut names it, and rules change live', async () => {
    const sandbox = sandboxForEnvd(a.envdURL)
    const target = `http://${external.address}:8080/`
    // 10.232.x is RFC 1918: closed by default, and a catch-all allowOut does not open it.
    expect(await curl(sandbox, target)).toMatch(/^blocked/)
    await test.agent.updateNetwork(a.sandboxID, { allowOut: ['0.0.0.0/0'], denyOut: [] })
    expect(await curl(sandbox, target)).toMatch(/^blocked/)
    await test.agent.updateNetwork(a.sandboxID, { allowOut: [external.address], denyOut: [] })
    expect(await curl(sandbox, target)).toBe('external')
    await test.agent.updateNetwork(a.sandboxID, {
      allowOut: [`${external.address.replace(/\.\d+$/, '.0')}/30`],
      denyOut: ['0.0.0.0/0'],
    })
    expect(await curl(sandbox, target)).toBe('external')
    await test.agent.updateNetwork(a.sandboxID, { allowOut: [], denyOut: [] })
    expect(await curl(sandbox, target)).toMatch(/^blocked/)
  })

  it('keeps sandboxes apart, while the host reaches each', async () => {
    const server = sandboxForEnvd(b.envdURL)
    await server.commands.run('python3 -m http.server 8000 --bind 0.0.0.0', {
      background: true,
      timeoutMs: 0,
    })
    await expect
      .poll(
        () =>
          fetch(`http://${b.address}:8000/`).then(
            (r) => r.status,
            () => 0,
          ),
        { timeout: 10_000 },
      )
      .toBe(200)
    expect(await curl(sandboxForEnvd(a.envdURL), `http://${b.address}:8000/`)).toMatch(/^blocked/)
  })

  it("cannot reach another sandbox's envd even when its allowOut names it", async () => {
    const sandbox = sandboxForEnvd(a.envdURL)
    const health = `${b.envdURL}/health`
    for (const allowOut of [[b.address], [TEST_ADDRESS_POOL], ['0.0.0.0/0']]) {
      await test.agent.updateNetwork(a.sandboxID, { allowOut, denyOut: [] })
      expect(await curl(sandbox, `-o /dev/null -w %{http_code} ${health}`)).toMatch(
        /^(000)?blocked/,
      )
    }
    await test.agent.updateNetwork(a.sandboxID, { allowOut: [], denyOut: [] })
  })

  it('answers envd to the service (root) only, not to other host users', async () => {
    const health = `${b.envdURL}/health`
    expect((await fetch(health)).status).toBe(204)
    const asNobody = await execFileAsync('setpriv', [
      ...['--reuid=65534', '--regid=65534', '--clear-groups'],
      ...['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '2', health],
    ]).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string; code?: number }) => `${error.stdout ?? ''} exit ${error.code}`,
    )
    expect(asNobody).toBe('000 exit 28')
  })

  it('leaves even root inside unable to change its network or send raw packets', async () => {
    // The sandbox's netns belongs to its own user namespace (CRIU needs that), so root inside
    // holds every capability it has over it: NET_ADMIN it never had, and NET_RAW it must not
    // have, or it could forge packets from another sandbox's address.
    const sandbox = sandboxForEnvd(a.envdURL)
    const attempts = [
      `ip addr add ${b.address}/32 dev eth0`,
      'ip link set eth0 down',
      "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)'",
      "python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)'",
      'echo 1 > /proc/sys/net/ipv4/conf/all/forwarding',
    ]
    const script = attempts.map((attempt) => `(${attempt}) 2>/dev/null; echo $?`).join('; ')
    const result = await sandbox.commands.run(script, { user: 'root' })
    const codes = result.stdout.trim().split('\n')
    expect(codes).toHaveLength(attempts.length)
    for (const code of codes) expect(code).not.toBe('0')
    expect((await fetch(`${a.envdURL}/health`)).status).toBe(204)
  })

  it('cannot reach a service on the host', async () => {
    const server = http.createServer((_req, res) => res.end('host'))
    server.listen(0, '0.0.0.0')
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo
    try {
      const sandbox = sandboxForEnvd(a.envdURL)
      const gateway = (
        await sandbox.commands.run("ip route | awk '/default/ {print $3}'")
      ).stdout.trim()
      // The host end of the sandbox's /30: one below its own address.
      expect(gateway).toBe(a.address.replace(/\d+$/, (last) => String(Number(last) - 1)))
      expect(await curl(sandbox, `http://${gateway}:${port}/`)).toMatch(/^blocked/)
    } finally {
      server.close()
    }
  })

  it('forwards a service bound to 127.0.0.1 inside to the sandbox address', async () => {
    const sandbox = sandboxForEnvd(a.envdURL)
    await sandbox.commands.run('python3 -m http.server 9000 --bind 127.0.0.1', {
      background: true,
      timeoutMs: 0,
    })
    await expect
      .poll(
        () =>
          fetch(`http://${a.address}:9000/`).then(
            (r) => r.status,
            () => 0,
          ),
        { timeout: 10_000 },
      )
      .toBe(200)
  })
})
