import { execFile } from 'node:child_process'
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { pino } from 'pino'
import type { TestProject } from 'vitest/node'
import { ensureTestBaseLayer, testLayerStore } from '../agent/base-layer.js'
import { writeInitramfs } from './guest-initramfs.js'
import { ensureGuestKernel } from './guest-kernel.js'
import { writeLayerImage } from './guest-layer-image.js'
import { GUEST_RUN_FILE, type GuestOutcome, INNER_TEST_NAMES, INNER_TESTS } from './guest-run.js'
import { killGuest, runGuest } from './guest-vm.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the guest writes its console and report, and GUEST_RUN_FILE once it has ended. */
    guestWorkDir: string
  }
}

/**
 * The guest's whole life, beside the rest of the suite. Under emulation on 2 cores its agent
 * tests took 8–10 min alone; at the lowest CPU priority beside the other projects it gets what
 * they leave, so 25 min, inside the project's hook limit.
 */
const GUEST_TIMEOUT_MS = 25 * 60_000

const repo = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '')

/**
 * Boots the cgroup v2 guest as the run starts and lets it work while the other projects run:
 * its emulated CPUs take minutes that would otherwise come after everything else. The
 * project's one test file, last in the run, waits for GUEST_RUN_FILE and checks the report.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const logger = pino({ level: process.env.SANDBAR_LOG_LEVEL ?? 'silent' })
  // Awaited here, as the agent project's setup does, so that the two never build it at once.
  // The guest has no network, so it cannot build the base template: it uses the host's cache.
  const base = testLayerStore(logger).path(await ensureTestBaseLayer(logger))
  const workDir = await mkdtemp('/tmp/sbt-guest-')
  project.provide('guestWorkDir', workDir)
  const guest = bootGuest(base, workDir)
  return async () => {
    killGuest()
    await guest
    await rm(workDir, { recursive: true, force: true })
  }
}

/** Prepares and runs the guest, then writes how it ended to GUEST_RUN_FILE; never rejects. */
async function bootGuest(base: string, workDir: string): Promise<void> {
  let outcome: GuestOutcome
  try {
    const kernel = await ensureGuestKernel()
    const initramfs = path.join(workDir, 'initramfs.cpio')
    await writeInitramfs(kernel, initramfs)
    const layer = await writeLayerImage([base], workDir)
    const buildDir = path.join(workDir, 'build')
    await promisify(execFile)(process.execPath, ['scripts/build.mjs', buildDir], { cwd: repo })
    const run = await runGuest(
      {
        kernel,
        initramfs,
        repo,
        tests: INNER_TESTS,
        testNames: INNER_TEST_NAMES,
        workDir,
        layer,
        buildDir,
      },
      GUEST_TIMEOUT_MS,
    )
    outcome = { run }
  } catch (error) {
    outcome = { failure: error instanceof Error ? (error.stack ?? error.message) : String(error) }
  }
  // Renamed into place: the test reads it whole or not at all.
  const file = path.join(workDir, GUEST_RUN_FILE)
  await writeFile(`${file}.partial`, JSON.stringify(outcome))
  await rename(`${file}.partial`, file)
}
