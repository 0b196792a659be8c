import { setTimeout as sleep } from 'node:timers/promises'
import type { Sandbox } from 'e2b'
import { timeMs } from './stats.js'
import { killAll, type UserServe } from './user-serve.js'

/** Each step of a sandbox's life as a user's script lives it, one sample per sandbox. */
export interface LifeSamples {
  /** `Sandbox.create()` + the first `commands.run('true')`. */
  createToFirst: number[]
  /** The first `commands.run('true')` alone. */
  first: number[]
  /** The three after it. */
  later: number[]
  /**
   * One more after the sandbox sat idle for IDLE_GAP_MS: what any command pays after a pause on
   * this host (caches gone cold, processes to wake), beside which the first one shows its own.
   */
  afterIdle: number[]
  kill: number[]
  /** How many of the creates took a sandbox from the warm pool. */
  pooled: number
}

const LATER_RUNS = 3
const IDLE_GAP_MS = 500
/** Between cold creates: the previous sandbox's teardown, which follows its kill's answer. */
const COLD_PAUSE_MS = 500

/**
 * `count` sandboxes one after another, each created, run, killed. `pooled`: nothing waits for
 * the warm pool, so the figure is what a user's loop at this pace (a life takes ~0.6 s) gets
 * from it, and `pooled` counts how often it had a sandbox ready; otherwise each waits out the
 * previous teardown. One unmeasured sandbox first.
 */
export async function sampleLives(
  serve: UserServe,
  count: number,
  { pooled }: { pooled: boolean },
): Promise<LifeSamples> {
  const samples: LifeSamples = {
    createToFirst: [],
    first: [],
    later: [],
    afterIdle: [],
    kill: [],
    pooled: 0,
  }
  for (let i = 0; i <= count; i++) {
    if (!pooled) await sleep(COLD_PAUSE_MS)
    const started = performance.now()
    const sandbox = await serve.create()
    const created = performance.now()
    await sandbox.commands.run('true')
    const ran = performance.now()
    const later: number[] = []
    for (let run = 0; run < LATER_RUNS; run++) {
      later.push(await timeMs(() => sandbox.commands.run('true')))
    }
    await sleep(IDLE_GAP_MS)
    const afterIdle = await timeMs(() => sandbox.commands.run('true'))
    const kill = await timeMs(() => sandbox.kill())
    if (i === 0) continue
    samples.createToFirst.push(ran - started)
    samples.first.push(ran - created)
    samples.later.push(...later)
    samples.afterIdle.push(afterIdle)
    samples.kill.push(kill)
    if (serve.wasPooled(sandbox.sandboxId)) samples.pooled++
  }
  return samples
}

/** A burst of concurrent creates, and how a sandbox already running fared during it. */
export interface BurstSamples {
  wallMs: number
  /** Each successful `Sandbox.create()` + first `commands.run('true')`. */
  createToFirst: number[]
  /** Why the others failed, as the SDK said. */
  failures: string[]
  /** The running sandbox's `commands.run('true')` round trips while the burst ran. */
  probe: number[]
  probeFailures: string[]
  /** How many of the burst's creates took a sandbox from the warm pool. */
  pooled: number
}

/**
 * `count` sandboxes created at once, each running its first command, beside a sandbox that
 * runs commands throughout. Failures are counted, not thrown: under load they are the figure.
 */
export async function sampleBurst(serve: UserServe, count: number): Promise<BurstSamples> {
  const running = await serve.create()
  const sandboxes: Sandbox[] = [running]
  try {
    await running.commands.run('true')
    const samples: BurstSamples = {
      wallMs: 0,
      createToFirst: [],
      failures: [],
      probe: [],
      probeFailures: [],
      pooled: 0,
    }
    let bursting = true
    const probing = (async () => {
      while (bursting) {
        await timeMs(() => running.commands.run('true')).then(
          (time) => samples.probe.push(time),
          (error: unknown) => samples.probeFailures.push(String(error)),
        )
      }
    })()
    samples.wallMs = await timeMs(() =>
      Promise.all(
        Array.from({ length: count }, async () => {
          const started = performance.now()
          try {
            const sandbox = await serve.create()
            sandboxes.push(sandbox)
            await sandbox.commands.run('true')
            samples.createToFirst.push(performance.now() - started)
            if (serve.wasPooled(sandbox.sandboxId)) samples.pooled++
          } catch (error) {
            samples.failures.push(String(error))
          }
        }),
      ),
    )
    bursting = false
    await probing
    return samples
  } finally {
    await killAll(sandboxes)
  }
}
