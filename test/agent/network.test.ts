import type { ChildProcess } from 'node:child_process'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AgentError } from '../../src/agent/errors.js'
import { runHostCommand } from '../../src/agent/host-command.js'
import { nftTableName } from '../../src/agent/host-names.js'
import { EgressPolicyError } from '../../src/agent/network/egress-policy.js'
import { vethMacAddress } from '../../src/agent/network/ip-commands.js'
import type { EgressPolicy, NetworkManager } from '../../src/agent/network/network.js'
import { createNetworkManager } from '../../src/agent/network/network-manager.js'
import { mountsUnder } from '../../src/agent/rootfs/mountinfo.js'
import {
  createOutside,
  forceRemove,
  leftovers,
  linksWithPrefix,
  netnsWithPrefix,
  reaches,
  reachesAsNobody,
  removeOutside,
  sandboxElements,
  startServer,
  stopServer,
  testIdentity,
} from './network-fixture.js'

const PORT = 8080
const open: EgressPolicy = { allowOut: [], denyOut: [] }

let prefix: string
let subnet: number
let manager: NetworkManager
let sandboxes: string[]
let servers: ChildProcess[]

async function sandbox(id: string, slot: number, policy: EgressPolicy = open) {
  sandboxes.push(id)
  return manager.setup(id, slot, policy)
}

async function server(netns: string | undefined, address: string) {
  const child = await startServer(netns, address, PORT)
  servers.push(child)
  return child
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

beforeEach(async () => {
  const identity = testIdentity()
  prefix = identity.prefix
  subnet = identity.subnet
  sandboxes = []
  servers = []
  // masquerade stays off in every test: sandbox traffic must never reach the real network.
  manager = createNetworkManager({
    prefix,
    addressPool: identity.pool,
    masquerade: false,
    masqueradeBuilds: false,
    logger: pino({ level: 'silent' }),
  })
  await manager.init()
})

afterEach(async () => {
  try {
    for (const child of servers) await stopServer(child)
    for (const id of sandboxes) await manager.teardown(id)
    await manager.destroy()
    await removeOutside(prefix)
    expect(await leftovers(prefix)).toEqual([])
  } finally {
    await forceRemove(prefix)
  }
})

describe('network manager', () => {
  it('wires netns, veth, addresses and rules; reports the sandbox present', async () => {
    const network = await sandbox('one', 3)
    expect(network).toEqual({
      netns: `${prefix}-one`,
      netnsPath: `/run/netns/${prefix}-one`,
      hostVeth: expect.stringMatching(new RegExp(`^${prefix}h[0-9a-f]{8}$`)),
      sandboxAddress: `10.241.${subnet}.14`,
      hostAddress: `10.241.${subnet}.13`,
    })
    const addrs = await runHostCommand('ip', ['-n', network.netns, '-j', 'addr', 'show', 'eth0'])
    expect(addrs).toContain(`"local":"${network.sandboxAddress}"`)
    const route = await runHostCommand('ip', ['-n', network.netns, 'route', 'show', 'default'])
    expect(route).toContain(`default via ${network.hostAddress} dev eth0`)
    expect(await linksWithPrefix(network.hostVeth)).toEqual([network.hostVeth])
    expect(await manager.present()).toEqual(['one'])
    const forward = await runHostCommand('nft', [
      'list',
      'chain',
      'inet',
      nftTableName(prefix),
      'forward',
    ])
    expect(forward).toMatch(new RegExp(`iifname "${prefix}h\\*" oifname \\{? ?"[^"]+"`))
  })

  it('needs no ARP between the ends: each knows the other as a permanent neighbour', async () => {
    // Learned entries of all namespaces share one capped table (ip-commands.ts): a sandbox's
    // traffic must not depend on room in it.
    const network = await sandbox('one', 3)
    const hostSide = await runHostCommand('ip', ['neigh', 'show', 'dev', network.hostVeth])
    expect(hostSide.trim()).toBe(
      `${network.sandboxAddress} lladdr ${vethMacAddress(network.sandboxAddress)} PERMANENT`,
    )
    const sandboxSide = await runHostCommand('ip', [
      '-n',
      network.netns,
      'neigh',
      'show',
      'dev',
      'eth0',
    ])
    expect(sandboxSide.trim()).toBe(
      `${network.hostAddress} lladdr ${vethMacAddress(network.hostAddress)} PERMANENT`,
    )
    const link = await runHostCommand('ip', ['-n', network.netns, '-j', 'link', 'show', 'eth0'])
    expect(link).toContain(`"address":"${vethMacAddress(network.sandboxAddress)}"`)
    await server(network.netns, network.sandboxAddress)
    const fromHost = await fetch(`http://${network.sandboxAddress}:${PORT}/`)
    expect(await fromHost.text()).toBe('ok')
  })

  it('measures setup, update and teardown', async () => {
    const times = { setup: [] as number[], update: [] as number[], teardown: [] as number[] }
    for (let slot = 0; slot < 10; slot++) {
      let started = performance.now()
      await manager.setup(`timed${slot}`, slot, open)
      times.setup.push(performance.now() - started)
      started = performance.now()
      await manager.update(`timed${slot}`, { allowOut: ['1.2.3.4'], denyOut: ['0.0.0.0/0'] })
      times.update.push(performance.now() - started)
    }
    for (let slot = 0; slot < 10; slot++) {
      const started = performance.now()
      await manager.teardown(`timed${slot}`)
      times.teardown.push(performance.now() - started)
    }
    const report = Object.entries(times).map(([name, ms]) => `${name} ${median(ms).toFixed(1)} ms`)
    console.log(`network p50 over 10 sandboxes: ${report.join(', ')} (host-facts: setup ~54 ms)`)
    expect(await manager.present()).toEqual([])
  })

  it('reaches a public server by default; denyOut blocks it as a CIDR and as a bare IP', async () => {
    const outside = await createOutside(prefix, subnet, 'public')
    await server(outside.netns, outside.address)
    const free = await sandbox('free', 0)
    const byCIDR = await sandbox('bycidr', 1, { allowOut: [], denyOut: [outside.network] })
    const byIP = await sandbox('byip', 2, { allowOut: [], denyOut: [outside.address] })
    expect(await reaches(free.netns, outside.address, PORT)).toBe(true)
    expect(await reaches(byCIDR.netns, outside.address, PORT)).toBe(false)
    expect(await reaches(byIP.netns, outside.address, PORT)).toBe(false)
  })

  it('lets allow beat deny, and flips live on update', async () => {
    const outside = await createOutside(prefix, subnet, 'public')
    await server(outside.netns, outside.address)
    const allowed = { allowOut: [outside.address], denyOut: ['0.0.0.0/0'] }
    const network = await sandbox('flip', 0, allowed)
    expect(await reaches(network.netns, outside.address, PORT)).toBe(true)
    await manager.update('flip', { allowOut: [], denyOut: ['0.0.0.0/0'] })
    expect(await reaches(network.netns, outside.address, PORT)).toBe(false)
    await manager.update('flip', allowed)
    expect(await reaches(network.netns, outside.address, PORT)).toBe(true)
  })

  it('closes private ranges unless allowOut names them; ALL_TRAFFIC does not', async () => {
    const outside = await createOutside(prefix, subnet, 'private')
    await server(outside.netns, outside.address)
    const network = await sandbox('private', 0)
    expect(await reaches(network.netns, outside.address, PORT)).toBe(false)
    await manager.update('private', { allowOut: ['0.0.0.0/0'], denyOut: [] })
    expect(await reaches(network.netns, outside.address, PORT)).toBe(false)
    await manager.update('private', { allowOut: ['10.232.0.0/16'], denyOut: ['0.0.0.0/0'] })
    expect(await reaches(network.netns, outside.address, PORT)).toBe(true)
    await manager.update('private', { allowOut: [outside.address], denyOut: [] })
    expect(await reaches(network.netns, outside.address, PORT)).toBe(true)
  })

  it("opens nothing for a sandbox through another tenant's allowOut or deny", async () => {
    // Every sandbox's elements share the allow and deny sets, keyed by its host veth, which the
    // kernel sets on its packets: another sandbox cannot borrow them.
    const outside = await createOutside(prefix, subnet, 'private')
    await server(outside.netns, outside.address)
    const opened = await sandbox('opened', 0, { allowOut: [outside.address], denyOut: [] })
    const closed = await sandbox('closed', 1)
    const denying = await sandbox('denying', 2, { allowOut: [], denyOut: ['0.0.0.0/0'] })
    expect(await reaches(opened.netns, outside.address, PORT)).toBe(true)
    expect(await reaches(closed.netns, outside.address, PORT)).toBe(false)
    expect(await reaches(denying.netns, outside.address, PORT)).toBe(false)
    // Its own allow still opens it, whatever the other sandboxes deny.
    await manager.update('denying', { allowOut: [outside.address], denyOut: ['0.0.0.0/0'] })
    expect(await reaches(denying.netns, outside.address, PORT)).toBe(true)
    await manager.update('opened', { allowOut: [], denyOut: [] })
    expect(await reaches(opened.netns, outside.address, PORT)).toBe(false)
    expect(await reaches(closed.netns, outside.address, PORT)).toBe(false)
  })

  it('keeps sandboxes apart whatever allowOut says, while the host reaches each', async () => {
    const a = await sandbox('a', 0)
    const b = await sandbox('b', 1)
    await server(a.netns, a.sandboxAddress)
    expect(await reaches(b.netns, a.sandboxAddress, PORT)).toBe(false)
    const fromHost = await fetch(`http://${a.sandboxAddress}:${PORT}/`)
    expect(await fromHost.text()).toBe('ok')
    for (const allowOut of [[a.sandboxAddress], [`10.241.${subnet}.0/24`], ['0.0.0.0/0']]) {
      await manager.update('b', { allowOut, denyOut: [] })
      expect(await reaches(b.netns, a.sandboxAddress, PORT)).toBe(false)
    }
    const c = await sandbox('c', 2, { allowOut: [a.sandboxAddress], denyOut: [] })
    expect(await reaches(c.netns, a.sandboxAddress, PORT)).toBe(false)
  })

  it('lets only root on the host open connections to a sandbox', async () => {
    const a = await sandbox('a', 0)
    await server(a.netns, a.sandboxAddress)
    expect(await reachesAsNobody(a.sandboxAddress, PORT)).toBe(false)
    const fromRoot = await fetch(`http://${a.sandboxAddress}:${PORT}/`)
    expect(await fromRoot.text()).toBe('ok')
  })

  it('keeps sandboxes away from host services, even through their gateway', async () => {
    await server(undefined, '0.0.0.0')
    const fromHost = await fetch(`http://127.0.0.1:${PORT}/`)
    expect(await fromHost.text()).toBe('ok')
    const network = await sandbox('nohost', 0, { allowOut: ['0.0.0.0/0'], denyOut: [] })
    expect(await reaches(network.netns, network.hostAddress, PORT)).toBe(false)
    await manager.update('nohost', { allowOut: [network.hostAddress], denyOut: [] })
    expect(await reaches(network.netns, network.hostAddress, PORT)).toBe(false)
  })

  it('tears down to nothing, twice; destroy removes the table, twice', async () => {
    const network = await sandbox('gone', 0, { allowOut: ['1.2.3.4'], denyOut: ['0.0.0.0/0'] })
    await manager.teardown('gone')
    await manager.teardown('gone')
    expect(await netnsWithPrefix(prefix)).toEqual([])
    // The netns's bind mount is off the host's mount table, not only its file gone.
    expect(await mountsUnder(network.netnsPath)).toEqual([])
    expect(await linksWithPrefix(prefix)).toEqual([])
    const table = await runHostCommand('nft', ['-j', 'list', 'table', 'inet', nftTableName(prefix)])
    expect(table).not.toContain(network.hostVeth)
    expect(await manager.present()).toEqual([])
    await manager.destroy()
    await manager.destroy()
    expect(await leftovers(prefix)).toEqual([])
  })

  it("tears down what is left of a sandbox's rules and nothing of another's", async () => {
    const kept = await sandbox('kept', 0, { allowOut: ['1.2.3.4'], denyOut: ['0.0.0.0/0'] })
    const half = await sandbox('half', 1, { allowOut: ['1.2.3.4'], denyOut: ['0.0.0.0/0'] })
    // As if a run had stopped midway: out of the ready set and its allow gone, its deny kept.
    const table = `inet ${nftTableName(prefix)}`
    await runHostCommand('nft', ['-f', '-'], {
      input:
        `delete element ${table} ready { "${half.hostVeth}" }\n` +
        `delete element ${table} allow { "${half.hostVeth}" . 1.2.3.4/32 }\n`,
    })
    await manager.teardown('half')
    expect(await sandboxElements(prefix)).toEqual({
      ready: [kept.hostVeth],
      allow: [`${kept.hostVeth} . 1.2.3.4`],
      deny: [`${kept.hostVeth} . 0.0.0.0/0`],
    })
  })

  it('sets up and tears down many sandboxes at once, their nft scripts joined', async () => {
    const ids = Array.from({ length: 24 }, (_, slot) => `many${slot}`)
    const deny = { allowOut: [], denyOut: ['0.0.0.0/0'] }
    const networks = await Promise.all(ids.map((id, slot) => sandbox(id, slot, deny)))
    const veths = networks.map(({ hostVeth }) => hostVeth).sort()
    expect(await sandboxElements(prefix)).toEqual({
      ready: veths,
      allow: [],
      deny: veths.map((veth) => `${veth} . 0.0.0.0/0`),
    })
    await Promise.all(ids.map((id) => manager.teardown(id)))
    expect(await sandboxElements(prefix)).toEqual({ ready: [], allow: [], deny: [] })
    expect(await manager.present()).toEqual([])
  })

  it("takes over a table's sandboxes when the agent starts again, and an older agent's layout", async () => {
    const outside = await createOutside(prefix, subnet, 'public')
    await server(outside.netns, outside.address)
    const moved = await sandbox('moved', 0, { allowOut: [outside.address], denyOut: ['0.0.0.0/0'] })
    const denied = await sandbox('denied', 1, { allowOut: [], denyOut: [outside.network] })
    // An agent before the per-veth sets kept `moved` in a chain of its own behind a verdict map.
    const t = `inet ${nftTableName(prefix)}`
    const veth = moved.hostVeth
    await runHostCommand('nft', ['-f', '-'], {
      input: [
        `delete element ${t} ready { "${veth}" }`,
        `delete element ${t} allow { "${veth}" . ${outside.address}/32 }`,
        `delete element ${t} deny { "${veth}" . 0.0.0.0/0 }`,
        `add map ${t} sandboxes { type ifname : verdict; }`,
        `add set ${t} allow_${veth} { type ipv4_addr; flags interval; }`,
        `add element ${t} allow_${veth} { ${outside.address}/32 }`,
        `add set ${t} deny_${veth} { type ipv4_addr; flags interval; }`,
        `add element ${t} deny_${veth} { 0.0.0.0/0 }`,
        `add chain ${t} sandbox_${veth}`,
        `add rule ${t} sandbox_${veth} ip daddr @allow_${veth} accept`,
        `add rule ${t} sandbox_${veth} ip daddr @deny_${veth} drop`,
        `add element ${t} sandboxes { "${veth}" : jump sandbox_${veth} }`,
        `add rule ${t} forward iifname "${veth}" iifname vmap @sandboxes`,
        '',
      ].join('\n'),
    })
    manager = createNetworkManager({
      prefix,
      addressPool: testIdentity().pool,
      masquerade: false,
      masqueradeBuilds: false,
      logger: pino({ level: 'silent' }),
    })
    await manager.init()
    const listing = await runHostCommand('nft', ['list', 'table', ...t.split(' ')])
    expect(listing).not.toMatch(/sandboxes|sandbox_|allow_|deny_/)
    expect(await sandboxElements(prefix)).toEqual({
      ready: [denied.hostVeth, veth].sort(),
      allow: [`${veth} . ${outside.address}`],
      deny: [`${denied.hostVeth} . ${outside.network}`, `${veth} . 0.0.0.0/0`].sort(),
    })
    expect(await reaches(moved.netns, outside.address, PORT)).toBe(true)
    expect(await reaches(denied.netns, outside.address, PORT)).toBe(false)
    // The new agent knows each sandbox's elements: an update and a teardown leave none behind.
    await manager.update('moved', { allowOut: [], denyOut: [outside.network] })
    expect(await reaches(moved.netns, outside.address, PORT)).toBe(false)
    await manager.teardown('denied')
    expect(await sandboxElements(prefix)).toEqual({
      ready: [veth],
      allow: [],
      deny: [`${veth} . ${outside.network}`],
    })
  })

  it('tears a sandbox down after the table went with the service network', async () => {
    await sandbox('orphan', 0)
    await manager.destroy()
    await manager.teardown('orphan')
    expect(await leftovers(prefix)).toEqual([])
  })

  it('refuses a second setup of a sandbox and leaves the first one working', async () => {
    const network = await sandbox('twice', 0)
    await expect(manager.setup('twice', 1, open)).rejects.toThrow(
      'network of sandbox twice already exists',
    )
    expect(await manager.present()).toEqual(['twice'])
    expect(await linksWithPrefix(network.hostVeth)).toEqual([network.hostVeth])
    expect((await sandboxElements(prefix)).ready).toEqual([network.hostVeth])
  })

  it('removes the netns and veth when setup fails half-way', async () => {
    const broken = createNetworkManager({
      prefix,
      addressPool: `10.241.${subnet}.0/24`,
      masquerade: false,
      masqueradeBuilds: false,
      logger: pino({ level: 'silent' }),
      nftPath: '/nonexistent/nft',
    })
    await expect(broken.setup('half', 0, open)).rejects.toThrow(AgentError)
    expect(await netnsWithPrefix(prefix)).toEqual([])
    expect(await linksWithPrefix(prefix)).toEqual([])
  })

  it('refuses a bad policy before touching the host', async () => {
    const setup = sandbox('bad', 0, { allowOut: [], denyOut: ['example.com'] })
    await expect(setup).rejects.toThrow(EgressPolicyError)
    await expect(setup).rejects.toThrow('invalid denied CIDR example.com')
    expect(await netnsWithPrefix(prefix)).toEqual([])
  })
})
