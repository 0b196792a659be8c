import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const ip = (...args: string[]) => run('ip', args)

/**
 * A network namespace of the test's own (`sbt-<random>`), joined to the host by a veth pair
 * on a random 10.233.x.x/30. Only loopback and this namespace ever see the test's traffic.
 */
const id = randomBytes(3).toString('hex')
const netns = `sbt-${id}`
const hostIf = `sbt${id}h`
const nsIf = `sbt${id}n`
const subnet = `10.233.${randomInt(256)}.${randomInt(64) * 4}`
const [a, b, c, d] = subnet.split('.').map(Number)
const hostAddress = `${a}.${b}.${c}.${(d ?? 0) + 1}`
const nsAddress = `${a}.${b}.${c}.${(d ?? 0) + 2}`

const children: ChildProcess[] = []
let envdLog = ''

/** Starts `node <args>` inside the namespace; the test ends it by PID. */
function inNamespace(args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn('ip', ['netns', 'exec', netns, process.execPath, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  })
  children.push(child)
  return child
}

/** Resolves when a server started with `inNamespace` prints that it listens. */
async function ready(child: ChildProcess): Promise<void> {
  if (child.stdout === null) throw new Error('the child has no stdout pipe')
  await once(child.stdout, 'data')
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGKILL')
  await exited
}

async function waitFor(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 5_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(100)
  }
}

const fetchText = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(1_000) }).then(
    (response) => response.text(),
    () => undefined,
  )

beforeAll(async () => {
  const { stdout } = await ip('-4', '-o', 'addr', 'show')
  if (stdout.includes(` ${hostAddress}/`) || stdout.includes(` ${nsAddress}/`)) {
    throw new Error(`${subnet}/30 is in use on this host; run again`)
  }
  await ip('netns', 'add', netns)
  await ip('link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf, 'netns', netns)
  await ip('addr', 'add', `${hostAddress}/30`, 'dev', hostIf)
  await ip('link', 'set', hostIf, 'up')
  await ip('-n', netns, 'addr', 'add', `${nsAddress}/30`, 'dev', nsIf)
  await ip('-n', netns, 'link', 'set', nsIf, 'up')
  await ip('-n', netns, 'link', 'set', 'lo', 'up')
  // envd as a sandbox runs it: forwarding on, on its real port (the namespace has its own).
  const envd = inNamespace(['--import', 'tsx', 'src/envd/main.ts', '--port', '49983'], {
    SANDBAR_PORT_FORWARD: '1',
    SANDBAR_LOG_LEVEL: 'info',
  })
  envd.stderr?.on('data', (chunk: Buffer) => {
    envdLog += chunk.toString()
  })
  await waitFor('envd to listen', () => envdLog.includes('envd listening'))
}, 30_000)

afterAll(async () => {
  for (const child of children) await stop(child)
  await ip('netns', 'del', netns).catch(() => undefined)
  // Deleting the namespace destroys the pair; this only catches a half-finished setup.
  await ip('link', 'del', hostIf).catch(() => undefined)
}, 30_000)

describe('localhost port forwarding (SANDBAR_PORT_FORWARD=1)', () => {
  it('makes a server bound to 127.0.0.1 reachable on the external address, until it stops', async () => {
    const port = 20_000 + randomInt(20_000)
    const server = inNamespace([
      '-e',
      `require('node:http').createServer((q, s) => s.end('hello from ' + q.url))
        .listen(Number(process.argv[1]), '127.0.0.1', () => console.log('ready'))`,
      String(port),
    ])
    await ready(server)
    const url = `http://${nsAddress}:${port}/sbt`
    await waitFor('the forward to answer', async () => (await fetchText(url)) === 'hello from /sbt')
    expect(envdLog).toMatch(new RegExp(`"port":${port}[^\\n]*"msg":"port forward opened"`))

    await stop(server)
    await waitFor('the forward to close', () => envdLog.includes('"msg":"port forward closed"'))
    expect(await fetchText(url)).toBeUndefined()
  }, 30_000)

  it('relays to ::1 for a server bound to IPv6 loopback only', async () => {
    const port = 20_000 + randomInt(20_000)
    const server = inNamespace([
      '-e',
      `require('node:http').createServer((q, s) => s.end('v6'))
        .listen(Number(process.argv[1]), '::1', () => console.log('ready'))`,
      String(port),
    ])
    await ready(server)
    const url = `http://${nsAddress}:${port}/`
    await waitFor('the forward to answer', async () => (await fetchText(url)) === 'v6')
    expect(envdLog).toMatch(new RegExp(`"port":${port},"target":"::1"`))
    await stop(server)
  }, 30_000)

  it('leaves a server already bound to 0.0.0.0 alone', async () => {
    const port = 40_000 + randomInt(20_000)
    const server = inNamespace([
      '-e',
      `require('node:http').createServer((q, s) => s.end('direct'))
        .listen(Number(process.argv[1]), '0.0.0.0', () => console.log('ready'))`,
      String(port),
    ])
    await ready(server)
    expect(await fetchText(`http://${nsAddress}:${port}/`)).toBe('direct')
    // Two scans' time: the forwarder saw the port and opened nothing for it.
    await sleep(2_200)
    expect(envdLog).not.toContain(`"port":${port}`)
    await stop(server)
  }, 30_000)
})
