import { randomBytes } from 'node:crypto'
import { rmdir } from 'node:fs/promises'
import { pino } from 'pino'
import { runHostCommand } from '../src/agent/host-command.js'
import { type Agent, createAgent, type SandboxTemplate } from '../src/agent/index.js'
import { readCgroupMode } from '../src/agent/runtime/cgroup-mode.js'
import { debianBaseLayerID, debianBaseRecipe } from '../src/builder/base/debian-base.js'

/** Where a bench agent keeps its state and finds its templates and envd bundle. */
export interface BenchAgentOptions {
  dataDir: string
  templatesDir: string
  envdBuildDir: string
}

/** An agent started by a bench, with the host objects it owns. */
export interface BenchAgent {
  agent: Agent
  prefix: string
  /** Kills every sandbox of the prefix, closes the agent, removes its table and cgroups. */
  dispose(): Promise<void>
}

/**
 * The IPv4 pool bench agents and services take sandbox networks from: the tests' variable, so
 * a bench beside a test suite on one host takes a pool of its own.
 */
export const benchAddressPool = process.env.SANDBAR_TEST_ADDRESS_POOL ?? '10.231.0.0/16'

/** A unique host prefix for one bench: `sbb` + two hex characters. */
export function benchPrefix(): string {
  return `sbb${randomBytes(1).toString('hex')}`
}

/**
 * Starts an agent like `sandbar serve` does, silent. With the prefix and data directory of a
 * stopped service it adopts that service's sandboxes, so `dispose` removes them too.
 */
export async function startBenchAgent(
  options: BenchAgentOptions,
  prefix = benchPrefix(),
): Promise<BenchAgent> {
  const agent = await createAgent({
    ...options,
    prefix,
    runtime: 'crun',
    addressPool: benchAddressPool,
    masquerade: false,
    pidsLimit: 1024,
    logger: pino({ level: 'silent' }),
  })
  const dispose = async () => {
    for (const sandbox of await agent.list()) await agent.kill(sandbox.sandboxID)
    await agent.close()
    await runHostCommand('nft', ['delete', 'table', 'inet', `sandbar_${prefix}`]).catch(
      () => undefined,
    )
    // Every cgroup hierarchy's copy of the agent's parent: one per v1 controller, or one.
    for (const mountPoint of (await readCgroupMode()).mountPoints) {
      await rmdir(`${mountPoint}/sandbar-${prefix}`).catch(() => undefined)
    }
  }
  return { agent, prefix, dispose }
}

/**
 * The base template's bottom layer as a template: what `sandbar serve` builds at its first
 * start, and what a bench agent's sandboxes start from (the service's cache holds it).
 */
export async function benchBaseTemplate(): Promise<SandboxTemplate> {
  return {
    templateID: 'base',
    layers: [debianBaseLayerID(await debianBaseRecipe())],
    defaultUser: 'user',
    defaultWorkdir: '/home/user',
  }
}
