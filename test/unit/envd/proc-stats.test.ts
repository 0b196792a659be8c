import { describe, expect, it } from 'vitest'
import { cpuUsedPercent, parseCpuSample, parseMeminfo } from '../../../src/envd/http/proc-stats.js'

describe('proc stats', () => {
  it('computes busy CPU share between two /proc/stat samples', () => {
    const before = parseCpuSample('cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 1 2 3 4\n')
    const after = parseCpuSample('cpu  150 0 150 900 0 0 0 0 0 0\n')
    expect(cpuUsedPercent(before, after)).toBe(50)
    expect(cpuUsedPercent(after, after)).toBe(0)
  })

  it('rounds to two decimals', () => {
    const before = { busy: 0, total: 0 }
    expect(cpuUsedPercent(before, { busy: 1, total: 3 })).toBe(33.33)
  })

  it('computes used memory as total - free - buffers - cache', () => {
    const info = parseMeminfo(
      'MemTotal:       1000 kB\nMemFree:         200 kB\nBuffers:          50 kB\nCached:          100 kB\nSReclaimable:     50 kB\n',
    )
    expect(info).toEqual({ total: 1000 * 1024, used: 600 * 1024, cached: 150 * 1024 })
  })
})
