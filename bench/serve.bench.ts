import { randomBytes } from 'node:crypto'
import { Sandbox } from 'e2b'
import * as z from 'zod/mini'
import { sandboxForEnvd } from '../test/support/sdk-sandbox.js'
import { type BenchAgentOptions, benchBaseTemplate, startBenchAgent } from './bench-agent.js'
import { type BenchClient, type BenchServe, startBenchServe } from './serve-launcher.js'
import { ms, percentile, report, sampleMs, timeMs } from './stats.js'

const CREATES = 20
const CONCURRENT = 20
const ENVD_PORT = 49983
/** What `sandbar serve` gives a base sandbox, so the floor starts the same container. */
const BASE_SIZES = {
  template: await benchBaseTemplate(),
  cpuCount: 2,
  memoryMB: 512,
  diskSizeMB: 512,
  envVars: {},
  egress: { allowOut: [], denyOut: [] },
}
const connectReply = z.object({ envdAccessToken: z.optional(z.string()) })

/**
 * The service's figures (issue 4), each beside a floor from the same run: SDK create → first
 * `commands.run` against the agent's own create → envd health; `commands.run('true')` through
 * the proxy against straight to envd; 20 concurrent SDK creates.
 */
export async function benchServe(options: BenchAgentOptions): Promise<void> {
  const floor = await agentCreateFloor(options)
  const { templatesDir, envdBuildDir } = options
  // Cold creates, the same work as the agent's create the floor times: no warm pool.
  const serve = await startBenchServe({ templatesDir, envdBuildDir }, CONCURRENT + 1, {
    extraArgs: ['--warm-pool', 'base=0'],
  })
  try {
    await benchCreateToRun(serve, floor)
    await benchProxyExec(serve.client)
    await benchConcurrentCreates(serve.client, floor)
  } finally {
    await serve.stop()
  }
}

/** SDK options for the service; `debug: false` overrides an `E2B_DEBUG` left by other benches. */
const sdk = (client: BenchClient) => ({ ...client, debug: false, timeoutMs: 120_000 })

/** The agent's create, which returns once envd answers /health, timed alone; kills untimed. */
async function agentCreateFloor(options: BenchAgentOptions): Promise<number[]> {
  const { agent, dispose } = await startBenchAgent(options)
  const times: number[] = []
  try {
    for (let i = 0; i <= CREATES; i++) {
      const sandboxID = `i${randomBytes(10).toString('hex')}`
      const time = await timeMs(() => agent.create({ ...BASE_SIZES, sandboxID }))
      if (i > 0) times.push(time)
      await agent.kill(sandboxID)
    }
    return times
  } finally {
    await dispose()
  }
}

async function benchCreateToRun(serve: BenchServe, floor: number[]): Promise<void> {
  const times: number[] = []
  const firstRuns: number[] = []
  const secondRuns: number[] = []
  for (let i = 0; i <= CREATES; i++) {
    let sandbox: Sandbox | undefined
    let firstRun = 0
    const time = await timeMs(async () => {
      sandbox = await Sandbox.create(sdk(serve.client))
      const created = sandbox
      firstRun = await timeMs(() => created.commands.run('true'))
    })
    const secondRun = await timeMs(async () => sandbox?.commands.run('true'))
    if (i > 0) {
      times.push(time)
      firstRuns.push(firstRun)
      secondRuns.push(secondRun)
    }
    await sandbox?.kill()
  }
  // The first command takes a new connection and paths no command took yet: shown apart, so
  // the control plane's share of the overhead is visible.
  console.log(
    `info first commands.run on a new sandbox p50: ${ms(percentile(firstRuns, 50))} | the next one: ${ms(percentile(secondRuns, 50))}`,
  )
  for (const p of [50, 99]) {
    const figure = percentile(times, p)
    const base = percentile(floor, p)
    report({
      name: `SDK create → first commands.run p${p}`,
      figure: ms(figure),
      floor: `agent create → envd health ${ms(base)}`,
      ratio: figure / base,
      target: 'overhead ≤ 20 ms',
      ok: figure - base <= 20,
    })
  }
}

async function benchProxyExec(client: BenchClient): Promise<void> {
  const sandbox = await Sandbox.create(sdk(client))
  try {
    // The SDK keeps the envd token to itself; connect answers it (§1.3 Sandbox).
    const connected = await fetch(`${client.apiUrl}/sandboxes/${sandbox.sandboxId}/connect`, {
      method: 'POST',
      headers: { 'X-API-Key': client.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ timeout: 300 }),
    })
    const { envdAccessToken } = connectReply.parse(await connected.json())
    const [address] = (await sandbox.commands.run('hostname -I')).stdout.trim().split(' ')
    if (address === undefined || address === '') throw new Error('sandbox has no address')
    const direct = sandboxForEnvd(`http://${address}:${ENVD_PORT}`, envdAccessToken)
    const viaProxy = await sampleMs(200, 20, () => sandbox.commands.run('true'))
    const straight = await sampleMs(200, 20, () => direct.commands.run('true'))
    const figure = percentile(viaProxy, 50)
    const base = percentile(straight, 50)
    report({
      name: "commands.run('true') through the proxy p50",
      figure: ms(figure),
      floor: `straight to envd ${ms(base)}`,
      ratio: figure / base,
      target: '≤ 1.3×',
      ok: figure / base <= 1.3,
    })
  } finally {
    await sandbox.kill()
  }
}

async function benchConcurrentCreates(client: BenchClient, floor: number[]): Promise<void> {
  const sandboxes: Sandbox[] = []
  const times: number[] = []
  const wall = await timeMs(() =>
    Promise.all(
      Array.from({ length: CONCURRENT }, async () => {
        times.push(await timeMs(async () => sandboxes.push(await Sandbox.create(sdk(client)))))
      }),
    ),
  )
  await Promise.all(sandboxes.map((sandbox) => sandbox.kill()))
  const p99 = percentile(times, 99)
  const base = percentile(floor, 50)
  report({
    name: `${CONCURRENT} concurrent SDK creates`,
    figure: `${((CONCURRENT * 1000) / wall).toFixed(1)} creates/s, p99 ${ms(p99)}`,
    floor: `one agent create p50 ${ms(base)}`,
    ratio: p99 / base,
    target: 'reported',
    ok: true,
  })
}
