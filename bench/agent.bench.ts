import { randomBytes } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { runHostCommand } from '../src/agent/host-command.js'
import { hostNames } from '../src/agent/host-names.js'
import type { Agent, SandboxInfo } from '../src/agent/index.js'
import { sandboxForEnvd } from '../test/support/sdk-sandbox.js'
import { type BenchAgentOptions, benchBaseTemplate, startBenchAgent } from './bench-agent.js'
import { crunRunDetached, freezerOf } from './floors/bare-container.js'
import { usedMemoryMiB } from './floors/host-memory.js'
import { ms, percentile, report, sampleMs, timeMs } from './stats.js'

const CREATES = 20
const DENSITY = 50

const baseTemplate = await benchBaseTemplate()

const request = () => ({
  sandboxID: `i${randomBytes(10).toString('hex')}`,
  template: baseTemplate,
  cpuCount: 1,
  memoryMB: 256,
  diskSizeMB: 512,
  envVars: {},
  egress: { allowOut: [], denyOut: [] },
})

/**
 * The agent's figures (issue 3), each beside a floor from the same run: create → envd health
 * against a bare `crun run -d` of a container on the same rootfs; `commands.run('true')`
 * against `crun exec <id> true`; pause+resume against raw freezer writes; memory per idle
 * sandbox over 50.
 */
export async function benchAgent(options: BenchAgentOptions) {
  const { agent, prefix, dispose } = await startBenchAgent(options)
  try {
    await benchCreate(agent, prefix, options.dataDir)
    const sandbox = await agent.create(request())
    await benchExec(sandbox, prefix, options.dataDir)
    await benchPause(agent, sandbox, prefix)
    await benchDensity(agent)
  } finally {
    await dispose()
  }
}

async function benchCreate(agent: Agent, prefix: string, dataDir: string): Promise<void> {
  const created: string[] = []
  const times = await sampleMs(CREATES, 1, async () => {
    const info = await agent.create(request())
    created.push(info.sandboxID)
  })
  const floor: number[] = []
  const unfiltered: number[] = []
  for (const sandboxID of created.slice(0, 10)) {
    const root = `${dataDir}/runtime/crun`
    // The sandbox's own spec and rootfs, with a bare process and a cgroup of its own; then the
    // same without the seccomp profile, to show what compiling and loading the filter costs.
    const bundle = `${dataDir}/sandboxes/${sandboxID}/bundle`
    const config = JSON.parse(await readFile(`${bundle}/config.json`, 'utf8'))
    config.process.args = ['/bin/sleep', '30']
    for (const [suffix, samples] of [
      ['floor', floor],
      ['unfiltered', unfiltered],
    ] as const) {
      const container = `${hostNames(prefix, sandboxID).container}-${suffix}`
      const variant = { ...config, linux: { ...config.linux } }
      variant.linux.cgroupsPath = `${config.linux.cgroupsPath}-${suffix}`
      if (suffix === 'unfiltered') delete variant.linux.seccomp
      await writeFile(`${bundle}/config.json`, JSON.stringify(variant))
      samples.push(await timeMs(() => crunRunDetached(root, container, bundle)))
      await runHostCommand('crun', ['--root', root, 'delete', '--force', container])
    }
  }
  for (const id of created) await agent.kill(id)
  for (const p of [50, 99]) {
    const figure = percentile(times, p)
    const base = percentile(floor, p)
    report({
      name: `create → envd /health p${p}`,
      figure: ms(figure),
      floor: `bare crun run -d ${ms(base)}`,
      ratio: figure / base,
      target: p === 50 ? '≤ 150 ms absolute' : 'reported',
      ok: p !== 50 || figure <= 150,
    })
  }
  const filtered = percentile(floor, 50)
  const bare = percentile(unfiltered, 50)
  report({
    name: 'crun run -d with the seccomp allow-list p50',
    figure: ms(filtered),
    floor: `without seccomp ${ms(bare)}`,
    ratio: filtered / bare,
    target: 'reported',
    ok: true,
  })
}

async function benchExec(info: SandboxInfo, prefix: string, dataDir: string): Promise<void> {
  const sandbox = sandboxForEnvd(info.envdURL)
  const run = await sampleMs(200, 20, () => sandbox.commands.run('true'))
  const container = hostNames(prefix, info.sandboxID).container
  const root = `${dataDir}/runtime/crun`
  const exec = await sampleMs(100, 10, () =>
    runHostCommand('crun', ['--root', root, 'exec', container, 'true']),
  )
  const figure = percentile(run, 50)
  const floor = percentile(exec, 50)
  report({
    name: "sandbox commands.run('true') p50",
    figure: ms(figure),
    floor: `crun exec true ${ms(floor)}`,
    ratio: figure / floor,
    target: 'reported',
    ok: true,
  })
}

async function benchPause(agent: Agent, info: SandboxInfo, prefix: string): Promise<void> {
  const cycle = await sampleMs(30, 3, async () => {
    await agent.pause(info.sandboxID)
    await agent.resume(info.sandboxID)
  })
  const freezer = await freezerOf(hostNames(prefix, info.sandboxID).cgroupPath)
  const raw = await sampleMs(30, 3, async () => {
    await writeFile(freezer.file, freezer.freeze)
    await writeFile(freezer.file, freezer.thaw)
  })
  const figure = percentile(cycle, 50)
  const floor = percentile(raw, 50)
  report({
    name: 'pause + resume p50',
    figure: ms(figure),
    floor: `raw freezer writes ${ms(floor)}`,
    ratio: figure / floor,
    target: '≤ 20 ms absolute',
    ok: figure <= 20,
  })
}

async function benchDensity(agent: Agent): Promise<void> {
  const before = await usedMemoryMiB()
  const sandboxes: SandboxInfo[] = []
  for (let i = 0; i < DENSITY; i++) sandboxes.push(await agent.create(request()))
  const idle = await settledMemoryPerSandbox(before)
  report({
    name: `memory per idle sandbox (${DENSITY})`,
    figure: `${idle.toFixed(1)} MiB`,
    floor: `host-facts: idle node sandbox ~7 MiB`,
    ratio: idle / 7,
    target: '≤ 12 MiB absolute',
    ok: idle <= 12,
  })
  // envd's Connect side is loaded after /init; a command adds what its path allocates.
  for (const info of sandboxes) await sandboxForEnvd(info.envdURL).commands.run('true')
  const used = await settledMemoryPerSandbox(before)
  report({
    name: `memory per sandbox after one command (${DENSITY})`,
    figure: `${used.toFixed(1)} MiB`,
    floor: `host-facts: idle node sandbox ~7 MiB`,
    ratio: used / 7,
    target: 'reported',
    ok: true,
  })
}

/** Host memory in use per density sandbox, since `before`, once their processes are idle. */
async function settledMemoryPerSandbox(before: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 2_000))
  return ((await usedMemoryMiB()) - before) / DENSITY
}
