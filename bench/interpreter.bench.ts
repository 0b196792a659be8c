import { Sandbox as CodeInterpreter } from '@e2b/code-interpreter'
import { Sandbox } from 'e2b'
import type { BenchAgentOptions } from './bench-agent.js'
import { startBenchServe } from './serve-launcher.js'
import { ms, percentile, report, sampleMs, timeMs } from './stats.js'

const SAMPLES = 8
/** Longer than the warm pool takes to start its next sandbox (~1 s here). */
const REFILL_WAIT_MS = 2500

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Issue 12's figure, through the official SDKs with their defaults against `sandbar serve`:
 * `Sandbox.create()` → first `runCode('1 + 1')` of `@e2b/code-interpreter` beside `base`'s
 * create → first `commands.run('true')` of `e2b` in the same run (target ≤ 2×). The pooled
 * figure lets the pool (default one sandbox) refill between creates, as a user's pace does; the
 * cold one is a second create right after, which finds the pool empty and its refill running.
 */
export async function benchInterpreter(options: Omit<BenchAgentOptions, 'dataDir'>): Promise<void> {
  const serve = await startBenchServe(options, 20, { codeInterpreter: true })
  try {
    const opts = { ...serve.client, debug: false }
    const base = await sampleMs(SAMPLES, 1, async () => {
      const sandbox = await Sandbox.create(opts)
      await sandbox.commands.run('true')
      await sandbox.kill()
    })
    const pooled: number[] = []
    const cold: number[] = []
    for (let i = 0; i <= SAMPLES; i++) {
      await wait(REFILL_WAIT_MS)
      const sandboxes: CodeInterpreter[] = []
      const createAndRun = async () => {
        const sandbox = await CodeInterpreter.create(opts)
        sandboxes.push(sandbox)
        const execution = await sandbox.runCode('1 + 1')
        if (execution.text !== '2') throw new Error(`runCode answered ${execution.text}`)
      }
      const first = await timeMs(createAndRun)
      const second = await timeMs(createAndRun)
      // The first round warms the SDK's connections and the server's caches.
      if (i > 0) {
        pooled.push(first)
        cold.push(second)
      }
      await Promise.all(sandboxes.map((sandbox) => sandbox.kill()))
    }
    const floor = percentile(base, 50)
    const figure = percentile(pooled, 50)
    report({
      name: 'code interpreter create → first runCode, pooled, p50',
      figure: ms(figure),
      floor: `${ms(floor)} (base create → first command)`,
      ratio: figure / floor,
      target: '≤ 2× base',
      ok: figure <= floor * 2,
    })
    const coldFigure = percentile(cold, 50)
    report({
      name: 'code interpreter create → first runCode, pool empty, p50 (diagnostic)',
      figure: ms(coldFigure),
      floor: `${ms(floor)} (base create → first command)`,
      ratio: coldFigure / floor,
      target: 'none: what --warm-pool code-interpreter-v1=N avoids',
      ok: true,
    })
  } finally {
    await serve.stop()
  }
}
