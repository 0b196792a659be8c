import { setTimeout as sleep } from 'node:timers/promises'
import type { Sandbox } from 'e2b'
import { hostBusyMsPerSecond } from './floors/host-cpu.js'
import { settledUsedMemoryMiB, usedMemoryMiB } from './floors/host-memory.js'
import { timeMs } from './stats.js'
import { DEFAULT_BASE_POOL, killAll, LONG_LIVED_MS, type UserServe } from './user-serve.js'

/** For the sandboxes' processes to go idle and the kernel's figures to catch up. */
const SETTLE_MS = 3_000

/** How long the host's CPU time is watched: before, with and after the idle sandboxes. */
const CPU_WINDOW_MS = 10_000

/**
 * How long the sandboxes idle before their CPU time counts: a node process that just started
 * collects garbage on its own for a while (V8's memory reducer), which is not idle work.
 */
const CPU_SETTLE_MS = 20_000

/**
 * A kill answers before its sandbox is torn down (issue 13). The rows after this one measure a
 * host that has finished removing these sandboxes, known by their cgroups' charge falling back
 * to within this much of what it was before them; they get this long to get there.
 */
const CLEANED_UP_SLACK_MIB = 64
const CLEANUP_TIMEOUT_MS = 300_000

export interface DensitySamples {
  /** All `count` creates, each followed by its first command, one after another. */
  sequentialMs: number
  /** The host's MemAvailable drop over the sandboxes, per sandbox. */
  perSandboxMiB: number
  /** What the kernel charged the sandboxes' cgroups over them, per sandbox. */
  perSandboxCgroupMiB: number
  /**
   * The host's CPU time the idle sandboxes take, per sandbox, in ms per second: everything
   * they make the host do (their envds, the service's polling of them, the kernel's work).
   */
  perSandboxCpuMsPerSecond: number
  /** Each sandbox's `commands.run('true')` once they all idle. */
  answers: number[]
  /** One `Sandbox.create()` + first command right after all of them were killed. */
  createAfterKillMs: number
}

/**
 * `count` sandboxes created one after another, each running one command, then left idle: the
 * host's memory and CPU time per sandbox, with the warm pool full both before and after so that
 * only the sandboxes count, and whether each still answers.
 */
export async function sampleDensity(
  serve: UserServe,
  count: number,
  options: {
    pooled: boolean
    /** What else the host must finish before the sandboxes' memory is read (KSM's merging). */
    settled?: () => Promise<void>
  },
): Promise<DensitySamples> {
  const settle = async () => {
    if (options.pooled) await serve.poolFilled(DEFAULT_BASE_POOL)
    await sleep(SETTLE_MS)
  }
  await settle()
  const baseline: Baseline = {
    usedMiB: await settledUsedMemoryMiB(),
    chargedMiB: await serve.sandboxesMemoryMiB(),
  }
  const busyBefore = await hostBusyMsPerSecond(CPU_WINDOW_MS)
  const { busyIdle, ...samples } = await sampleIdleSandboxes(serve, count, baseline, async () => {
    await settle()
    await options.settled?.()
  })
  // The host's own CPU time, once before the sandboxes and once after they went: other work on
  // the host in either window only adds to it, so the lower of the two is the host's own.
  const busyOwn = Math.min(busyBefore, await hostBusyMsPerSecond(CPU_WINDOW_MS))
  return { ...samples, perSandboxCpuMsPerSecond: (busyIdle - busyOwn) / count }
}

/** The host's memory before the sandboxes: MemAvailable's use and the sandboxes' charge. */
interface Baseline {
  usedMiB: number
  chargedMiB: number
}

/**
 * The sandboxes' part of sampleDensity, with the host's CPU time while they idle; they are
 * killed and gone from the host's memory when it returns.
 */
async function sampleIdleSandboxes(
  serve: UserServe,
  count: number,
  baseline: Baseline,
  settle: () => Promise<void>,
): Promise<Omit<DensitySamples, 'perSandboxCpuMsPerSecond'> & { busyIdle: number }> {
  const sandboxes: Sandbox[] = []
  try {
    const sequentialMs = await timeMs(async () => {
      for (let i = 0; i < count; i++) {
        const sandbox = await serve.create({ timeoutMs: LONG_LIVED_MS })
        sandboxes.push(sandbox)
        await sandbox.commands.run('true')
      }
    })
    await settle()
    const perSandboxMiB = ((await usedMemoryMiB()) - baseline.usedMiB) / count
    const perSandboxCgroupMiB = ((await serve.sandboxesMemoryMiB()) - baseline.chargedMiB) / count
    await sleep(CPU_SETTLE_MS)
    const busyIdle = await hostBusyMsPerSecond(CPU_WINDOW_MS)
    const answers: number[] = []
    for (const sandbox of sandboxes) answers.push(await timeMs(() => sandbox.commands.run('true')))
    await killAll(sandboxes.splice(0))
    // What a user who creates next sees while their teardowns are under way.
    const createAfterKillMs = await timeMs(async () => {
      const sandbox = await serve.create({ timeoutMs: LONG_LIVED_MS })
      sandboxes.push(sandbox)
      await sandbox.commands.run('true')
    })
    return {
      sequentialMs,
      perSandboxMiB,
      perSandboxCgroupMiB,
      busyIdle,
      answers,
      createAfterKillMs,
    }
  } finally {
    await killAll(sandboxes)
    await chargeFallsTo(serve, baseline.chargedMiB + CLEANED_UP_SLACK_MIB)
  }
}

async function chargeFallsTo(serve: UserServe, mib: number): Promise<void> {
  const deadline = Date.now() + CLEANUP_TIMEOUT_MS
  while ((await serve.sandboxesMemoryMiB()) > mib) {
    if (Date.now() > deadline) {
      console.warn(`the killed sandboxes still hold memory after ${CLEANUP_TIMEOUT_MS} ms`)
      return
    }
    await sleep(500)
  }
}

/** How long a used sandbox sits idle before its memory is read. */
export const USED_SANDBOX_IDLE_MS = 5_000

/**
 * What the kernel charges a sandbox that has been used (the command and file rows' calls),
 * once idle USED_SANDBOX_IDLE_MS: what a user's sandbox between tasks holds.
 */
export async function sampleUsedSandboxMemory(serve: UserServe, sandbox: Sandbox): Promise<number> {
  await sleep(USED_SANDBOX_IDLE_MS)
  return serve.sandboxMemoryMiB(sandbox.sandboxId)
}
