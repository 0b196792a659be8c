import { describe, expect, it } from 'vitest'
import { HOST_PID_RESERVE, pidsBudget } from '../../../../src/agent/limits/parent-cgroup.js'

describe('pidsBudget', () => {
  it('keeps the reserve, or a tenth of the ceiling, for the host', () => {
    expect(pidsBudget(32_768, 192_729)).toBe(32_768 - HOST_PID_RESERVE)
    expect(pidsBudget(4_194_304, 4_194_304)).toBe(4_194_304 - 419_431)
  })

  it('takes threads-max as the ceiling when it is the lower one', () => {
    expect(pidsBudget(4_194_304, 100_000)).toBe(100_000 - 10_000)
  })
})
