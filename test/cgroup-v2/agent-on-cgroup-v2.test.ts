import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cgroupMounts } from '../../src/agent/runtime/cgroup-mode.js'
import { ensureTestBaseLayer, testLayerStore } from '../agent/base-layer.js'
import { writeInitramfs } from './guest-initramfs.js'
import { ensureGuestKernel } from './guest-kernel.js'
import { writeLayerImage } from './guest-layer-image.js'
import { type GuestReport, parseGuestReport } from './guest-report.js'
import { type GuestRun, killGuest, runGuest } from './guest-vm.js'

// This machine's cgroups are hybrid (host-facts), most users' are pure v2. The agent tests
// that touch cgroups run again in a guest whose only cgroup file system is cgroup2 at
// /sys/fs/cgroup: limits, OOM, pids, pause and resume, kill, reconcile and their leak checks,
// on each runtime.
const INNER_TESTS = [
  'test/agent/runtime.test.ts',
  'test/agent/sandbox-lifecycle.test.ts',
  'test/agent/reconcile.test.ts',
]

/**
 * Vitest's `-t` pattern over those files' test names: the cases whose outcome depends on the
 * cgroup hierarchy, after a sandbox's first commands (emulated, envd's first command takes
 * seconds, longer than the fork bomb case allows). The rest (seccomp, files, network devices,
 * ID maps) behave alike on any cgroup mode and cost minutes under emulation. No spaces or
 * commas: it rides on the kernel command line.
 */
const INNER_TEST_NAMES =
  'runs.commands.through.envd|cgroup|limits|pause.stops|remove|pids|fork.bomb|OOM|lists.what.runs|reconcile|adopts'

/**
 * The guest's whole life. Under emulation on 2 cores its agent tests took 8–10 min in this
 * suite's runs (when it still built the bundles itself), so 15 min, inside the project's
 * 20-min hook limit.
 */
const GUEST_TIMEOUT_MS = 15 * 60_000

/** Console lines shown when something in the guest failed. */
const CONSOLE_TAIL_LINES = 150

const repo = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '')
const logger = pino({ level: process.env.SANDBAR_LOG_LEVEL ?? 'silent' })

let workDir = ''
let run: GuestRun | undefined
let report: GuestReport | Error = new Error('the guest did not run')

beforeAll(async () => {
  // The guest has no network, so it cannot build the base template: it uses the host's cache.
  const base = testLayerStore(logger).path(await ensureTestBaseLayer(logger))
  const kernel = await ensureGuestKernel()
  workDir = await mkdtemp('/tmp/sbt-guest-')
  const initramfs = path.join(workDir, 'initramfs.cpio')
  await writeInitramfs(kernel, initramfs)
  const layer = await writeLayerImage([base], workDir)
  const buildDir = path.join(workDir, 'build')
  await promisify(execFile)(process.execPath, ['scripts/build.mjs', buildDir], { cwd: repo })
  run = await runGuest(
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
  try {
    report = parseGuestReport(run.report)
  } catch (error) {
    report = error instanceof Error ? error : new Error(String(error))
  }
})

afterAll(async () => {
  killGuest()
  if (workDir !== '') await rm(workDir, { recursive: true, force: true })
})

/** The report, or a failure that shows what the guest printed. */
function guestReport(): GuestReport {
  if (report instanceof Error) throw new Error(`${report.message}\n${consoleTail()}`)
  return report
}

function consoleTail(): string {
  const lines = (run?.console ?? '').split('\n').slice(-CONSOLE_TAIL_LINES)
  return `guest console, last ${lines.length} lines:\n${lines.join('\n')}`
}

describe('the agent on a pure cgroup v2 host', () => {
  it('has cgroup2 at /sys/fs/cgroup as the guest’s only cgroup file system', () => {
    const { cgroupMounts: lines, cgroupMode } = guestReport()
    expect(cgroupMounts(lines.join('\n'))).toEqual([
      { mountPoint: '/sys/fs/cgroup', fsType: 'cgroup2' },
    ])
    expect(cgroupMode.kind).toBe('v2')
  })

  it('passes the agent tests there', () => {
    const { vitest, vitestExitCode } = guestReport()
    const files = vitest.testResults
      .map((result) => ({ file: path.relative(repo, result.name), status: result.status }))
      .sort((a, b) => a.file.localeCompare(b.file))
    const expected = [...INNER_TESTS].sort().map((file) => ({ file, status: 'passed' }))
    expect(files, consoleTail()).toEqual(expected)
    expect(vitest.numFailedTests, consoleTail()).toBe(0)
    expect(vitest.numPassedTests).toBeGreaterThan(0)
    expect(vitestExitCode, consoleTail()).toBe(0)
  })

  it('leaves no cgroup, netns, nft table, mount or temp dir behind in the guest', () => {
    expect(guestReport().leftovers).toEqual([])
  })

  it('powers the guest off', () => {
    expect(guestReport().complete, consoleTail()).toBe(true)
    expect(run?.timedOut).toBe(false)
    expect(run?.exitCode, consoleTail()).toBe(0)
  })
})
