import { describe, expect, it } from 'vitest'
import { exitStatus } from '../../../../src/envd/process/exit-status.js'

describe('exitStatus', () => {
  it('reports a clean exit without an error', () => {
    expect(exitStatus({ code: 0 })).toEqual({
      exitCode: 0,
      exited: true,
      status: 'exit status 0',
      error: undefined,
    })
  })

  it('repeats a non-zero status as the error', () => {
    expect(exitStatus({ code: 3 })).toEqual({
      exitCode: 3,
      exited: true,
      status: 'exit status 3',
      error: 'exit status 3',
    })
  })

  it.each([
    [9, 'signal: killed'],
    [15, 'signal: terminated'],
    [2, 'signal: interrupt'],
    [1, 'signal: hangup'],
    [11, 'signal: segmentation fault'],
    [64, 'signal: signal 64'],
  ])('describes signal %i the way Go does: %s', (signal, status) => {
    expect(exitStatus({ signal })).toEqual({ exitCode: -1, exited: false, status, error: status })
  })
})
