import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, rmdir } from 'node:fs/promises'
import { pino } from 'pino'
import { inject } from 'vitest'
import { runHostCommand } from '../../src/agent/host-command.js'
import {
  type Agent,
  type AgentConfig,
  createAgent,
  type SandboxRequest,
  type SandboxTemplate,
} from '../../src/agent/index.js'
import { pathExists } from '../../src/agent/path-exists.js'
import { type SandboxRecord, SandboxRecords } from '../../src/agent/sandbox-record.js'
import { TEMPLATE_CACHE } from './base-layer.js'
import { leftoverCgroupDirs } from './cgroup-probe.js'
import { TEST_ID_MAP } from './runtime-fixture.js'

export { TEMPLATE_CACHE }

/**
 * The address pool of test agents and test services: `SANDBAR_TEST_ADDRESS_POOL` gives two
 * suites running side by side on one host disjoint pools.
 */
export const TEST_ADDRESS_POOL = process.env.SANDBAR_TEST_ADDRESS_POOL ?? '10.231.0.0/16'

/** A unique agent prefix for one test file: `sbt` + two random characters. */
export function testPrefix(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'
  const [a = 0, b = 0] = randomBytes(2)
  return `sbt${alphabet[a % 36]}${alphabet[b % 36]}`
}

/** A request for a small sandbox of the base template with a fresh ID. */
export function sandboxRequest(overrides: Partial<SandboxRequest> = {}): SandboxRequest {
  return {
    sandboxID: `i${randomBytes(10).toString('hex')}`,
    template: baseTemplate(),
    cpuCount: 1,
    memoryMB: 256,
    diskSizeMB: 512,
    envVars: {},
    egress: { allowOut: [], denyOut: [] },
    ...overrides,
  }
}

/** The Debian base layer as a template, with the base template's user and workdir. */
export function baseTemplate(overrides: Partial<SandboxTemplate> = {}): SandboxTemplate {
  return {
    templateID: 'base',
    layers: [inject('baseLayerID')],
    defaultUser: 'user',
    defaultWorkdir: '/home/user',
    ...overrides,
  }
}

/** The agent's record of a sandbox (its slot, ID map, state). */
export async function readRecord(dataDir: string, sandboxID: string): Promise<SandboxRecord> {
  const record = await new SandboxRecords(`${dataDir}/sandboxes`).read(sandboxID)
  if (record === undefined) throw new Error(`no record of sandbox ${sandboxID}`)
  return record
}

/**
 * Saves the record of a sandbox whose create never finished (state `creating`, slot 7), as a
 * crash mid-create leaves it: reconcile must remove whatever else it had on the host.
 */
export async function saveHalfMadeRecord(dataDir: string, sandboxID: string): Promise<void> {
  await new SandboxRecords(`${dataDir}/sandboxes`).save({
    sandboxID,
    templateID: 'base',
    runtime: 'crun',
    slot: 7,
    idMap: TEST_ID_MAP,
    cpuCount: 1,
    memoryMB: 256,
    diskSizeMB: 512,
    envVars: {},
    egress: { allowOut: [], denyOut: [] },
    state: 'creating',
    createdAt: new Date().toISOString(),
  })
}

export interface TestAgent {
  agent: Agent
  config: AgentConfig
  /** Kills the agent's sandboxes, removes its table and data, and reports any leak. */
  dispose(): Promise<string[]>
}

/** A test agent's settings, all but the logger (so they can cross to another process as JSON). */
export async function testAgentConfig(
  overrides: Partial<AgentConfig> = {},
): Promise<Omit<AgentConfig, 'logger'>> {
  const { logger: _logger, ...rest } = overrides
  return {
    dataDir: overrides.dataDir ?? (await mkdtemp('/tmp/sbt-agent-')),
    templatesDir: TEMPLATE_CACHE,
    prefix: testPrefix(),
    runtime: 'crun',
    addressPool: TEST_ADDRESS_POOL,
    masquerade: false,
    pidsLimit: 512,
    envdBuildDir: inject('envdBuildDir'),
    // The cgroup-v2 guest emulates its CPU: three concurrent creates there take many seconds.
    ...(process.env.SANDBAR_TEST_ENVD_START_TIMEOUT_MS === undefined
      ? {}
      : { envdStartTimeoutMs: Number(process.env.SANDBAR_TEST_ENVD_START_TIMEOUT_MS) }),
    ...rest,
  }
}

export async function startTestAgent(overrides: Partial<AgentConfig> = {}): Promise<TestAgent> {
  const config: AgentConfig = {
    ...(await testAgentConfig(overrides)),
    logger: overrides.logger ?? pino({ level: process.env.SANDBAR_LOG_LEVEL ?? 'silent' }),
  }
  const agent = await createAgent(config)
  return {
    agent,
    config,
    dispose: async () => {
      try {
        for (const sandbox of await agent.list()) await agent.kill(sandbox.sandboxID)
        // Volumes outlive the agent as sandboxes do; a test's go with its data directory.
        for (const volumeID of await agent.volumes.list()) await agent.volumes.remove(volumeID)
        await agent.close()
        return await hostLeaks(config)
      } finally {
        // Whatever happened above, the table, data and cgroup parents of this agent go.
        await runHostCommand('nft', ['delete', 'table', 'inet', `sandbar_${config.prefix}`]).catch(
          () => undefined,
        )
        await rm(config.dataDir, { recursive: true, force: true })
        for (const dir of await leftoverCgroupDirs(`/sandbar-${config.prefix}`)) {
          await rmdir(dir).catch(() => undefined)
        }
      }
    },
  }
}

/**
 * What an agent's sandboxes left on the host: netns, nft elements, mounts, loop devices, disk
 * images, cgroups, containers and processes carrying its prefix or living under its data
 * directory.
 */
export async function hostLeaks(config: AgentConfig): Promise<string[]> {
  const { prefix, dataDir } = config
  const leaks: string[] = []
  const netns = await runHostCommand('ip', ['netns', 'list'])
  for (const line of netns.split('\n'))
    if (line.startsWith(`${prefix}-`)) leaks.push(`netns ${line}`)
  const mounts = await readFile('/proc/self/mountinfo', 'utf8')
  for (const line of mounts.split('\n')) if (line.includes(dataDir)) leaks.push(`mount ${line}`)
  const loops = await runHostCommand('losetup', ['--list', '--noheadings', '-O', 'NAME,BACK-FILE'])
  for (const line of loops.split('\n')) if (line.includes(dataDir)) leaks.push(`loop ${line}`)
  for (const sandboxID of await readdir(`${dataDir}/sandboxes`).catch(() => [])) {
    const image = `${dataDir}/sandboxes/${sandboxID}/disk.img`
    if (await pathExists(image)) leaks.push(`disk image ${image}`)
  }
  const links = await runHostCommand('ip', ['-o', 'link'])
  for (const line of links.split('\n')) if (line.includes(` ${prefix}h`)) leaks.push(`link ${line}`)
  const table = await runHostCommand('nft', ['list', 'table', 'inet', `sandbar_${prefix}`]).catch(
    () => '',
  )
  // A sandbox's elements name its host veth; the rules' patterns end in `*`.
  for (const veth of new Set(table.match(new RegExp(`(?<=")${prefix}h[0-9a-fx]+(?=")`, 'g')))) {
    leaks.push(`nft elements of ${veth}`)
  }
  for (const dir of await leftoverCgroupDirs(`/sandbar-${prefix}`)) {
    const children = await readdir(dir, { withFileTypes: true }).catch(() => [])
    for (const child of children) if (child.isDirectory()) leaks.push(`cgroup ${dir}/${child.name}`)
  }
  // Every runtime the agent may have used: sandboxes keep the one they started on.
  for (const runtime of ['crun', 'runc', 'runsc']) {
    const root = `${dataDir}/runtime/${runtime}`
    const containers = await runHostCommand(runtime, ['--root', root, 'list', '-q']).catch(() => '')
    for (const id of containers.split('\n')) if (id.trim()) leaks.push(`${runtime} container ${id}`)
  }
  return leaks
}
