import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxInfo } from '../../src/agent/index.js'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import { baseTemplate, sandboxRequest, startTestAgent, type TestAgent } from './agent-fixture.js'

// Issue 9 item 13: each sandbox's IDs are its own on the host, outside every subordinate range
// the host hands out, and the template layers every sandbox shares are no sandbox's to write.

/** Where useradd(8) takes subordinate ranges from (login.defs defaults: SUB_UID_MIN/MAX). */
const USERADD_SUBORDINATE = { start: 100_000, end: 600_100_000 + 65_536 }

let test: TestAgent
let a: SandboxInfo
let b: SandboxInfo

beforeAll(async () => {
  test = await startTestAgent()
  a = await test.agent.create(sandboxRequest())
  b = await test.agent.create(sandboxRequest())
})

afterAll(async () => {
  const leaks = await test?.dispose()
  expect(leaks).toEqual([])
})

interface Range {
  start: number
  end: number
}

/** The host range root inside `sandbox` maps to, from its own `/proc/self/{uid,gid}_map`. */
async function hostRange(sandbox: SandboxInfo, map: 'uid_map' | 'gid_map'): Promise<Range> {
  const result = await sandboxForEnvd(sandbox.envdURL).commands.run(`cat /proc/self/${map}`, {
    user: 'root',
  })
  const [inside, outside, size] = result.stdout.trim().split(/\s+/).map(Number)
  expect(inside).toBe(0)
  return { start: Number(outside), end: Number(outside) + Number(size) }
}

/** Ranges of /etc/subuid or /etc/subgid (`name:start:count` lines). */
async function subordinateRanges(file: string): Promise<Range[]> {
  const text = await readFile(file, 'utf8').catch(() => '')
  return text.split('\n').flatMap((line) => {
    const [, start, count] = line.split(':').map(Number)
    return start === undefined || count === undefined || Number.isNaN(start + count)
      ? []
      : [{ start, end: start + count }]
  })
}

const overlaps = (x: Range, y: Range) => x.start < y.end && y.start < x.end

/** Whether host `uid` (with gid `uid`, no groups) may write `file`, per access(2). */
function canWrite(uid: number, file: string): Promise<boolean> {
  return hostUserMay(uid, '-w', file)
}

/** Whether host `uid` (with gid `uid`, no groups) passes `test <check> file`. */
async function hostUserMay(uid: number, check: '-w' | '-r', file: string): Promise<boolean> {
  const id = String(uid)
  const probe = promisify(execFile)('setpriv', [
    ...['--reuid', id, '--regid', id, '--clear-groups'],
    ...['test', check, file],
  ])
  return probe.then(
    () => true,
    () => false,
  )
}

/** The template layers the test sandboxes stack (the Debian base). */
async function templateLayers(): Promise<string[]> {
  const layers = path.join(test.config.templatesDir ?? test.config.dataDir, 'layers')
  return baseTemplate().layers.map((name) => path.join(layers, name))
}

describe("a sandbox's host IDs", () => {
  it('are a range of its own, outside every subordinate range of the host', async () => {
    const ranges = await Promise.all([
      hostRange(a, 'uid_map'),
      hostRange(a, 'gid_map'),
      hostRange(b, 'uid_map'),
      hostRange(b, 'gid_map'),
    ])
    const [aUIDs, aGIDs, bUIDs, bGIDs] = ranges as [Range, Range, Range, Range]
    expect(overlaps(aUIDs, bUIDs)).toBe(false)
    expect(overlaps(aGIDs, bGIDs)).toBe(false)
    const taken = [
      ...(await subordinateRanges('/etc/subuid')),
      ...(await subordinateRanges('/etc/subgid')),
      USERADD_SUBORDINATE,
    ]
    for (const range of ranges) {
      expect(taken.filter((other) => overlaps(range, other))).toEqual([])
    }
  })

  it("cannot write another sandbox's upper layer nor any template layer", async () => {
    const root = (await hostRange(a, 'uid_map')).start
    const bUpper = `${test.config.dataDir}/sandboxes/${b.sandboxID}/disk/upper`
    const targets = [bUpper]
    for (const layer of await templateLayers()) {
      targets.push(layer, `${layer}/etc`, `${layer}/etc/passwd`, `${layer}/usr/bin`)
    }
    const writable = []
    for (const target of targets) if (await canWrite(root, target)) writable.push(target)
    expect(writable).toEqual([])
    // The probe itself is sound: A's root may write what any host user may.
    expect(await canWrite(root, '/tmp')).toBe(true)
  })

  it("are the only ones besides host root to reach into the sandbox's directory", async () => {
    const hostname = (sandbox: SandboxInfo) =>
      `${test.config.dataDir}/sandboxes/${sandbox.sandboxID}/rootfs/etc/hostname`
    const nobody = 65534
    expect(await hostUserMay(nobody, '-r', hostname(a))).toBe(false)
    expect(await hostUserMay((await hostRange(a, 'uid_map')).start, '-r', hostname(b))).toBe(false)
    expect(await hostUserMay((await hostRange(a, 'uid_map')).start, '-r', hostname(a))).toBe(true)
  })
})

describe('inside a sandbox', () => {
  it('root writes anywhere in its own file system, and the template layer stays as it was', async () => {
    const layers = await templateLayers()
    const passwd = () => Promise.all(layers.map((layer) => readFile(`${layer}/etc/passwd`, 'utf8')))
    const passwdBefore = await passwd()
    const sandbox = sandboxForEnvd(a.envdURL)
    const marker = `sbt-${randomBytes(4).toString('hex')}`
    const write = await sandbox.commands.run(
      `echo '${marker}:x:2000:2000::/nonexistent:/usr/sbin/nologin' >> /etc/passwd && touch /usr/bin/${marker} && mkdir -p /var/lib/apt/lists/${marker} && id -un ${marker}`,
      { user: 'root' },
    )
    expect(write.stdout).toBe(`${marker}\n`)
    expect(await passwd()).toEqual(passwdBefore)
    const other = await sandboxForEnvd(b.envdURL).commands.run(
      `grep -c ${marker} /etc/passwd || true`,
    )
    expect(other.stdout).toBe('0\n')
  })

  it('sudo works, and what user and root create shows as theirs inside and in range outside', async () => {
    const sandbox = sandboxForEnvd(a.envdURL)
    const sudo = await sandbox.commands.run('sudo -n id -u && touch /home/user/mine')
    expect(sudo.stdout).toBe('0\n')
    const owners = await sandbox.commands.run(
      'sudo -n touch /home/user/roots && stat -c %U:%G /home/user/mine /home/user/roots /home/user /etc/passwd',
    )
    expect(owners.stdout).toBe('user:user\nroot:root\nuser:user\nroot:root\n')
    const root = (await hostRange(a, 'uid_map')).start
    const upper = `${test.config.dataDir}/sandboxes/${a.sandboxID}/disk/upper`
    const mine = await stat(`${upper}/home/user/mine`)
    expect({ uid: mine.uid, gid: mine.gid }).toEqual({ uid: root + 1000, gid: root + 1000 })
    const roots = await stat(`${upper}/home/user/roots`)
    expect({ uid: roots.uid, gid: roots.gid }).toEqual({ uid: root, gid: root })
  })
})
