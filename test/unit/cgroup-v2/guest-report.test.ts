import { describe, expect, it } from 'vitest'
import { parseGuestReport } from '../../cgroup-v2/guest-report.js'

const vitestJSON = JSON.stringify({
  numPassedTests: 3,
  numFailedTests: 0,
  numPendingTests: 1,
  testResults: [{ name: '/repo/test/agent/runtime.test.ts', status: 'passed' }],
})

// As a serial port delivers it: every line ends in "\r\n".
const report = [
  '--- cgroup-mounts',
  '32 23 0:29 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw,nsdelegate',
  '--- cgroup-mode',
  '{"kind":"v2","mountPoints":["/sys/fs/cgroup"]}',
  '--- vitest-exit',
  '0',
  '--- vitest-json',
  vitestJSON,
  '',
  '--- leftovers',
  '--- end',
  '',
].join('\r\n')

describe('parseGuestReport', () => {
  it('reads each section, without the serial port’s carriage returns', () => {
    expect(parseGuestReport(report)).toEqual({
      cgroupMounts: ['32 23 0:29 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw,nsdelegate'],
      cgroupMode: { kind: 'v2' },
      vitestExitCode: 0,
      vitest: JSON.parse(vitestJSON),
      leftovers: [],
      complete: true,
    })
  })

  it('tells a report cut short by the end marker it lacks', () => {
    expect(parseGuestReport(report.replace('--- end\r\n', '')).complete).toBe(false)
  })

  it('refuses an empty exit code, which the inner run did not get to write', () => {
    expect(() =>
      parseGuestReport(report.replace('--- vitest-exit\r\n0\r\n', '--- vitest-exit\r\n')),
    ).toThrow('no Vitest exit code')
  })

  it('names a missing section', () => {
    expect(() => parseGuestReport(report.slice(0, report.indexOf('--- vitest-exit')))).toThrow(
      "the guest's report has no vitest-exit section",
    )
  })
})
