import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { cgroupMounts } from '../../src/agent/runtime/cgroup-mode.js'
import { type GuestReport, parseGuestReport } from './guest-report.js'
import { guestOutcome, INNER_TESTS } from './guest-run.js'
import type { GuestRun } from './guest-vm.js'

/** Console lines shown when something in the guest failed. */
const CONSOLE_TAIL_LINES = 150

const repo = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '')

let run: GuestRun | undefined
let report: GuestReport | Error = new Error('the guest did not run')

// The guest boots as the run starts (global-setup.ts); this file comes last and waits for it.
beforeAll(async () => {
  const outcome = await guestOutcome(inject('guestWorkDir'))
  if ('failure' in outcome) {
    report = new Error(`the guest did not boot: ${outcome.failure}`)
    return
  }
  run = outcome.run
  try {
    report = parseGuestReport(run.report)
  } catch (error) {
    report = error instanceof Error ? error : new Error(String(error))
  }
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
    expect(cgroupMounts(lines.join('\n'))).toMatchObject([
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
