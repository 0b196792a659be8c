import { setTimeout as sleep } from 'node:timers/promises'
import type { Sandbox } from 'e2b'
import { usedMemoryMiB } from './floors/host-memory.js'
import { timeMs } from './stats.js'
import { DEFAULT_BASE_POOL, killAll, type UserServe } from './user-serve.js'

/** Long enough for the slowest run (1,000 creates) to keep every sandbox alive to the end. */
const DENSITY_TIMEOUT_MS = 60 * 60 * 1000
/** For the sandboxes' processes to go idle and the kernel's figures to catch up. */
const SETTLE_MS = 3_000

export interface DensitySamples {
  /** All `count` creates, each followed by its first command, one after another. */
  sequentialMs: number
  /** The host's MemAvailable drop over the sandboxes, per sandbox. */
  perSandboxMiB: number
  /** Each sandbox's `commands.run('true')` once they all idle. */
  answers: number[]
}

/**
 * `count` sandboxes created one after another, each running one command, then left idle: the
 * host's memory per sandbox, with the warm pool full both before and after so that only the
 * sandboxes count, and whether each still answers.
 */
export async function sampleDensity(
  serve: UserServe,
  count: number,
  { pooled }: { pooled: boolean },
): Promise<DensitySamples> {
  const settle = async () => {
    if (pooled) await serve.poolFilled(DEFAULT_BASE_POOL)
    await sleep(SETTLE_MS)
  }
  await settle()
  const before = await usedMemoryMiB()
  const sandboxes: Sandbox[] = []
  try {
    const sequentialMs = await timeMs(async () => {
      for (let i = 0; i < count; i++) {
        const sandbox = await serve.create({ timeoutMs: DENSITY_TIMEOUT_MS })
        sandboxes.push(sandbox)
        await sandbox.commands.run('true')
      }
    })
    await settle()
    const perSandboxMiB = ((await usedMemoryMiB()) - before) / count
    const answers: number[] = []
    for (const sandbox of sandboxes) answers.push(await timeMs(() => sandbox.commands.run('true')))
    return { sequentialMs, perSandboxMiB, answers }
  } finally {
    await killAll(sandboxes)
  }
}
