import { randomBytes } from 'node:crypto'
import { Sandbox, Template } from 'e2b'
import type { BenchAgentOptions } from './bench-agent.js'
import { type BenchClient, startBenchServe } from './serve-launcher.js'
import { ms, percentile, report, sampleMs, timeMs } from './stats.js'

/** Five everyday steps: what the cold build runs, and what the floor runs by hand. */
const STEPS = [
  'mkdir -p /opt/app',
  'echo "print(42)" > /opt/app/main.py',
  'python3 -m compileall -q /opt/app',
  'useradd --create-home bench-user',
  'printf "a\\nb\\n" | sort > /opt/app/sorted',
]
const CREATES = 10
const DEEP_LAYERS = 20

const sdk = (client: BenchClient) => ({ ...client, debug: false, cpuCount: 1, memoryMB: 512 })

/** The 5-step template, after a step that makes its layers this run's own. */
function fiveSteps(nonce: string) {
  let template = Template().fromBaseImage().runCmd(`echo ${nonce} > /tmp/nonce`)
  for (const step of STEPS) template = template.runCmd(step, { user: 'root' })
  return template
}

/**
 * Issue 11's figures, through the SDK against `sandbar serve`, each beside a floor from the
 * same run: a cold 5-step build beside the same commands run by hand in one sandbox (the work
 * without the layers); a full-cache rebuild (target under a second) beside a round trip to the
 * API; create → first command of a 20-layer template beside the same for `base`.
 */
export async function benchTemplates(options: Omit<BenchAgentOptions, 'dataDir'>): Promise<void> {
  // `base` starts cold as the 20-layer template does, with no pool in front of it.
  const serve = await startBenchServe(options, 20, { extraArgs: ['--warm-pool', 'base=0'] })
  try {
    const opts = sdk(serve.client)
    const nonce = randomBytes(6).toString('hex')
    const name = `bench-${nonce}`
    const cold = await timeMs(() => Template.build(fiveSteps(nonce), name, opts))
    const byHand = await timeMs(async () => {
      const sandbox = await Sandbox.create(opts)
      for (const step of [`echo ${nonce} > /tmp/nonce`, ...STEPS]) {
        await sandbox.commands.run(step, { user: 'root' })
      }
      await sandbox.kill()
    })
    report({
      name: 'cold build of a 5-step template',
      figure: ms(cold),
      floor: `${ms(byHand)} (create + the 5 commands + kill, by hand)`,
      ratio: cold / byHand,
      target: 'a layer per step',
      ok: true,
    })
    const rebuilds = await sampleMs(5, 0, () => Template.build(fiveSteps(nonce), name, opts))
    const roundTrips = await sampleMs(20, 2, () =>
      fetch(`${serve.client.apiUrl}/templates`, { headers: { 'X-API-Key': serve.client.apiKey } }),
    )
    const rebuild = percentile(rebuilds, 50)
    report({
      name: 'full-cache rebuild, p50',
      figure: ms(rebuild),
      floor: `${ms(percentile(roundTrips, 50))} (an API round trip)`,
      ratio: rebuild / percentile(roundTrips, 50),
      target: 'under 1 s',
      ok: rebuild < 1000,
    })
    let deep = Template().fromBaseImage()
    for (let i = 0; i < DEEP_LAYERS; i++) {
      deep = deep.runCmd(`echo ${i} > /opt/layer-${i}-${nonce}`, { user: 'root' })
    }
    await Template.build(deep, `${name}-deep`, opts)
    const createAndRun = (template: string) => async () => {
      const sandbox = await Sandbox.create(template, opts)
      await sandbox.commands.run('true')
      await sandbox.kill()
    }
    const base = percentile(await sampleMs(CREATES, 1, createAndRun('base')), 50)
    const deepCreate = percentile(await sampleMs(CREATES, 1, createAndRun(`${name}-deep`)), 50)
    report({
      name: `create → first command, ${DEEP_LAYERS}-layer template, p50`,
      figure: ms(deepCreate),
      floor: `${ms(base)} (base)`,
      ratio: deepCreate / base,
      target: '≤ 1.2× base',
      ok: deepCreate <= base * 1.2,
    })
  } finally {
    await serve.stop()
  }
}
