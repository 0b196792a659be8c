import { type ChildProcess, spawn } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import * as z from 'zod/mini'
import { AgentError } from '../../src/agent/errors.js'
import { runHostCommand } from '../../src/agent/host-command.js'
import { nftTableName } from '../../src/agent/host-names.js'

/**
 * Host objects for the network tests. Everything carries the test's prefix (STYLE.md habit 12),
 * and traffic only ever goes to loopback or to namespaces the test made.
 */

const SERVER = `
const [address, port] = process.argv.slice(1)
require('node:http').createServer((_, res) => res.end('ok')).listen(Number(port), address, () => {
  process.stdout.write('listening\\n')
})`

const CLIENT = `
const [url, ms] = process.argv.slice(1)
fetch(url, { signal: AbortSignal.timeout(Number(ms)) }).then((r) => r.text()).then(
  (body) => { process.stdout.write(body); process.exit(0) },
  (error) => { process.stderr.write(String(error)); process.exit(1) },
)`

/**
 * Long enough for a local round trip many times over; a dropped SYN never answers. The client
 * exits at once either way: undici's own connect attempt would otherwise hold it for 10 s.
 */
const CLIENT_TIMEOUT_MS = 1500

/** A fresh prefix (`sbt` + 2 characters, PREFIX_PATTERN) and /24 pool per test. */
export function testIdentity() {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'
  const pick = () => alphabet[randomInt(alphabet.length)] ?? 'a'
  const subnet = randomInt(256)
  return { prefix: `sbt${pick()}${pick()}`, pool: `10.241.${subnet}.0/24`, subnet }
}

/** Starts an HTTP server answering `ok`, inside `netns` or on the host; resolves when it listens. */
export async function startServer(netns: string | undefined, address: string, port: number) {
  const argv = ['node', '-e', SERVER, address, String(port)]
  const [file = 'node', ...args] =
    netns === undefined ? argv : ['ip', 'netns', 'exec', netns, ...argv]
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve())
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)))
  })
  return child
}

/** Kills by PID (`ip netns exec` execs node, so the PID is the server's). */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
}

/** Whether an HTTP GET from inside `netns` gets the server's `ok`. */
export function reaches(netns: string, address: string, port: number): Promise<boolean> {
  return fetchesOk(['ip', 'netns', 'exec', netns], address, port)
}

/**
 * Whether an HTTP GET from the host as user and group `nobody` (65534, no supplementary groups)
 * gets the server's `ok`: what any unprivileged host user can do.
 */
export function reachesAsNobody(address: string, port: number): Promise<boolean> {
  const asNobody = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups']
  return fetchesOk(asNobody, address, port)
}

async function fetchesOk(launcher: string[], address: string, port: number): Promise<boolean> {
  const [file = 'setpriv', ...args] = [
    ...launcher,
    process.execPath,
    '-e',
    CLIENT,
    `http://${address}:${port}/`,
    String(CLIENT_TIMEOUT_MS),
  ]
  try {
    return (await runHostCommand(file, args)) === 'ok'
  } catch (error) {
    if (error instanceof AgentError) return false
    throw error
  }
}

/**
 * Where an outside namespace sits: `private` is RFC 1918 (`10.232.<subnet>.0/30`), closed to
 * sandboxes unless their allowOut names it; `public` is a /30 of TEST-NET-3 (RFC 5737,
 * `203.0.113.0/24`, documentation only, routed nowhere but to this test's veth), which stands in
 * for an internet address that sandboxes reach by default.
 */
export type OutsideKind = 'private' | 'public'

/**
 * A namespace standing in for "somewhere outside": its own veth to the host, an address outside
 * the sandbox pool, and a route back to the pool only. Forwarding is on for its host end because
 * replies to the sandboxes enter the host there (the kernel checks the ingress interface).
 */
export async function createOutside(prefix: string, subnet: number, kind: OutsideKind = 'private') {
  const netns = `${prefix}out`
  const hostVeth = `${prefix}o0`
  const base = kind === 'private' ? `10.232.${subnet}.0` : `203.0.113.${(subnet % 64) * 4}`
  const network = base.replace(/\.\d+$/, '')
  const last = Number(base.split('.')[3])
  const hostAddress = `${network}.${last + 1}`
  const address = `${network}.${last + 2}`
  await runHostCommand('ip', ['-batch', '-'], {
    input: `netns add ${netns}
link add ${hostVeth} type veth peer name eth0 netns ${netns}
addr add ${hostAddress}/30 dev ${hostVeth}
link set ${hostVeth} up
`,
  })
  await runHostCommand('ip', ['-n', netns, '-batch', '-'], {
    input: `link set lo up
addr add ${address}/30 dev eth0
link set eth0 up
route add 10.241.${subnet}.0/24 via ${hostAddress}
`,
  })
  await writeFile(`/proc/sys/net/ipv4/conf/${hostVeth}/forwarding`, '1')
  return { netns, address, network: `${base}/30` }
}

const Named = z.array(z.object({ name: z.string() }))
const Links = z.array(z.object({ ifname: z.string() }))
const Tables = z.object({
  nftables: z.array(z.object({ table: z.optional(z.object({ name: z.string() })) })),
})

export async function netnsWithPrefix(prefix: string): Promise<string[]> {
  const stdout = await runHostCommand('ip', ['-j', 'netns', 'list'])
  const list = Named.parse(stdout.trim() === '' ? [] : JSON.parse(stdout))
  return list.map((netns) => netns.name).filter((name) => name.startsWith(prefix))
}

export async function linksWithPrefix(prefix: string): Promise<string[]> {
  const list = Links.parse(JSON.parse(await runHostCommand('ip', ['-j', 'link', 'show'])))
  return list.map((link) => link.ifname).filter((name) => name.startsWith(prefix))
}

export async function tableExists(prefix: string): Promise<boolean> {
  const stdout = await runHostCommand('nft', ['-j', 'list', 'tables', 'inet'])
  const names = Tables.parse(JSON.parse(stdout)).nftables.flatMap((item) => item.table?.name ?? [])
  return names.includes(nftTableName(prefix))
}

const SetListing = z.object({
  nftables: z.array(
    z.object({ set: z.optional(z.object({ elem: z.optional(z.array(z.unknown())) })) }),
  ),
})

/**
 * The elements of the table's per-sandbox sets, sorted: `ready` holds host veths, `allow` and
 * `deny` `<veth> . <network>` as nft prints them (a /32 without its length).
 */
export async function sandboxElements(
  prefix: string,
): Promise<{ ready: string[]; allow: string[]; deny: string[] }> {
  const elementsOf = async (set: string): Promise<string[]> => {
    const stdout = await runHostCommand('nft', [
      '-j',
      'list',
      'set',
      'inet',
      nftTableName(prefix),
      set,
    ])
    const elements = SetListing.parse(JSON.parse(stdout)).nftables.flatMap(
      ({ set }) => set?.elem ?? [],
    )
    return elements.map(formatElement).sort()
  }
  return {
    ready: await elementsOf('ready'),
    allow: await elementsOf('allow'),
    deny: await elementsOf('deny'),
  }
}

function formatElement(element: unknown): string {
  if (typeof element === 'string') return element
  const { concat } = z.object({ concat: z.tuple([z.string(), z.unknown()]) }).parse(element)
  const [veth, network] = concat
  if (typeof network === 'string') return `${veth} . ${network}`
  const { prefix } = z
    .object({ prefix: z.object({ addr: z.string(), len: z.number() }) })
    .parse(network)
  return `${veth} . ${prefix.addr}/${prefix.len}`
}

/** Deletes the outside namespace: the host end first, so the pair is gone at once. */
export async function removeOutside(prefix: string): Promise<void> {
  if ((await linksWithPrefix(`${prefix}o0`)).length > 0) {
    await runHostCommand('ip', ['link', 'delete', `${prefix}o0`])
  }
  if ((await netnsWithPrefix(`${prefix}out`)).length > 0) {
    await runHostCommand('ip', ['netns', 'delete', `${prefix}out`])
  }
}

/** Host objects carrying the prefix. */
export async function leftovers(prefix: string): Promise<string[]> {
  return [
    ...(await netnsWithPrefix(prefix)).map((name) => `netns ${name}`),
    ...(await linksWithPrefix(prefix)).map((name) => `link ${name}`),
    ...((await tableExists(prefix)) ? [`table ${nftTableName(prefix)}`] : []),
  ]
}

/** Removes whatever survived, so one failing test does not leave the host dirty. */
export async function forceRemove(prefix: string): Promise<void> {
  for (const link of await linksWithPrefix(prefix)) {
    // Deleting one end of a pair deletes the other: a later name may already be gone.
    await runHostCommand('ip', ['link', 'delete', link]).catch(() => undefined)
  }
  for (const netns of await netnsWithPrefix(prefix)) {
    await runHostCommand('ip', ['netns', 'delete', netns])
  }
  await runHostCommand('nft', ['-f', '-'], {
    input: `add table inet ${nftTableName(prefix)}\ndelete table inet ${nftTableName(prefix)}\n`,
  })
}
