import { randomInt } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { Sandbox } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runHostCommand } from '../../src/agent/host-command.js'
import { hostNames } from '../../src/agent/host-names.js'
import { leftoverCgroupDirs } from '../agent/cgroup-probe.js'
import { callApi } from '../support/serve-process.js'
import { type ServeInstance, startServe } from './serve-fixture.js'

// Issue 9 item 17: SIGKILL `sandbar serve` at a random point of each lifecycle call, start it
// again, and every sandbox must be listed and working, or gone from the host entirely.

/** Rounds per operation; five operations. */
const ROUNDS = 6
/** A create takes about a second (envd's start); the others tens of milliseconds. */
const KILL_WITHIN_MS = { create: 1500, kill: 150, pause: 150, resume: 150, network: 150 }
type Operation = keyof typeof KILL_WITHIN_MS

let serve: ServeInstance
const opts = () => ({ ...serve.client, timeoutMs: 600_000 })

beforeAll(async () => {
  serve = await startServe(['--max-sandboxes', '20'])
})

afterAll(async () => {
  const leaks = await serve?.stop()
  expect(leaks).toEqual([])
})

/** The sandboxes the API lists, with their state. */
async function listed(): Promise<Map<string, string>> {
  const answer = await callApi(serve.client, 'GET', '/v2/sandboxes?state=running,paused')
  expect(answer.status).toBe(200)
  const sandboxes = answer.body as { sandboxID: string; state: string }[]
  return new Map(sandboxes.map((sandbox) => [sandbox.sandboxID, sandbox.state]))
}

/**
 * Every host object of the service (netns, veth, nft element, cgroup, mount, container, record
 * directory with its upper layer, process) that belongs to none of `ids`.
 */
async function strayHostObjects(ids: Set<string>): Promise<string[]> {
  const { prefix } = serve
  const own = new Set<string>()
  for (const id of ids) {
    const names = hostNames(prefix, id)
    for (const name of [names.container, names.netns, names.hostVeth, id]) own.add(name)
  }
  const stray: string[] = []
  const check = (kind: string, name: string) => {
    if (!own.has(name)) stray.push(`${kind} ${name}`)
  }
  for (const line of (await runHostCommand('ip', ['netns', 'list'])).split('\n')) {
    const name = line.split(' ')[0] ?? ''
    if (name.startsWith(`${prefix}-`)) check('netns', name)
  }
  for (const match of (await runHostCommand('ip', ['-o', 'link'])).matchAll(/^\d+: ([^:@]+)/gm))
    if (match[1]?.startsWith(`${prefix}h`)) check('link', match[1])
  const table = await runHostCommand('nft', ['list', 'table', 'inet', `sandbar_${prefix}`])
  // A sandbox's elements name its host veth; the rules' patterns end in `*`.
  for (const veth of table.match(new RegExp(`(?<=")${prefix}h[0-9a-fx]+(?=")`, 'g')) ?? [])
    check('nft element', veth)
  for (const dir of await leftoverCgroupDirs(`/sandbar-${prefix}`)) {
    for (const child of await readdir(dir, { withFileTypes: true }))
      if (child.isDirectory()) check('cgroup', child.name)
  }
  const mounts = await readFile('/proc/self/mountinfo', 'utf8')
  for (const match of mounts.matchAll(new RegExp(`${serve.dataDir}/sandboxes/(\\w+)/`, 'g')))
    check('mount', match[1] ?? '')
  for (const name of await readdir(`${serve.dataDir}/sandboxes`)) check('sandbox dir', name)
  const containers = await runHostCommand('crun', [
    '--root',
    `${serve.dataDir}/runtime/crun`,
    'list',
    '-q',
  ]).catch(() => '')
  for (const id of containers.split('\n')) if (id.trim()) check('container', id.trim())
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    const cgroup = await readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => '')
    const match = new RegExp(`/sandbar-${prefix}/(\\w+)`).exec(cgroup)
    if (match?.[1] !== undefined) check(`process ${pid} of`, match[1])
  }
  return stray
}

/** Starts the operation, SIGKILLs the service within `KILL_WITHIN_MS`, starts it again. */
async function crashDuring(operation: Operation, call: () => Promise<unknown>): Promise<void> {
  const settled = call().then(
    () => 'answered',
    () => 'failed',
  )
  await sleep(randomInt(KILL_WITHIN_MS[operation] + 1))
  await serve.crashAndRestart()
  await settled
}

/** One sandbox in `state`, made without faults when none is listed so. */
async function anySandbox(state: 'running' | 'paused'): Promise<string> {
  for (const [id, current] of await listed()) if (current === state) return id
  const sandbox = await Sandbox.create(opts())
  if (state === 'paused') await sandbox.pause()
  return sandbox.sandboxId
}

const faults: Record<Operation, () => Promise<() => Promise<unknown>>> = {
  create: async () => () => Sandbox.create(opts()),
  kill: async () => {
    const id = await anySandbox('running')
    return () => Sandbox.kill(id, opts())
  },
  pause: async () => {
    const sandbox = await Sandbox.connect(await anySandbox('running'), opts())
    return () => sandbox.pause()
  },
  resume: async () => {
    const id = await anySandbox('paused')
    return () => Sandbox.connect(id, opts())
  },
  network: async () => {
    const sandbox = await Sandbox.connect(await anySandbox('running'), opts())
    return () => sandbox.updateNetwork({ denyOut: [`10.9.${randomInt(256)}.0/24`] })
  },
}

describe('SIGKILL of sandbar serve during lifecycle calls', () => {
  const operations = Object.keys(faults) as Operation[]
  for (let round = 0; round < ROUNDS * operations.length; round++) {
    const operation = operations[round % operations.length] as Operation
    it(`round ${round}: ${operation}`, async () => {
      await crashDuring(operation, await faults[operation]())
      const sandboxes = await listed()
      const problems: string[] = []
      for (const [id, state] of sandboxes) {
        // Connect resumes a paused sandbox (§1.4); a listed sandbox must then run commands.
        const output = await Sandbox.connect(id, opts())
          .then((sandbox) => sandbox.commands.run('echo alive'))
          .then(
            (result) => result.stdout,
            (error: unknown) => String(error),
          )
        if (output !== 'alive\n') problems.push(`${state} ${id} answered ${output}`)
      }
      problems.push(...(await strayHostObjects(new Set(sandboxes.keys()))))
      // Keep a few sandboxes, so kills and creates stay in balance.
      for (const id of [...sandboxes.keys()].slice(2)) await Sandbox.kill(id, opts())
      expect(problems).toEqual([])
    })
  }
})
