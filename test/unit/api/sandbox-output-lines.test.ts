import { describe, expect, it } from 'vitest'
import { logEntryFromOutputLine } from '../../../src/api/sandbox-output-lines.js'

const received = new Date('2026-11-21T10:00:00.000Z')

describe('a sandbox output line as a log entry', () => {
  it('reads envd’s pino line: time, level, message, and the rest as string fields', () => {
    const line = JSON.stringify({
      level: 30,
      time: 1795276165827,
      pid: 412,
      hostname: 'sandbox',
      name: 'envd',
      msg: 'process started',
      cmd: ['/bin/bash', '-l', '-c', 'ls'],
      tag: null,
      user: 'user',
    })
    expect(logEntryFromOutputLine(line, received)).toEqual({
      timestamp: new Date(1795276165827),
      level: 'info',
      message: 'process started',
      fields: { pid: '412', cmd: '["/bin/bash","-l","-c","ls"]', user: 'user' },
    })
  })

  it('maps every pino level to the contract’s four', () => {
    const levelOf = (level: number) =>
      logEntryFromOutputLine(JSON.stringify({ level, msg: 'x' }), received).level
    expect([10, 20, 30, 40, 50, 60].map(levelOf)).toEqual([
      'debug',
      'debug',
      'info',
      'warn',
      'error',
      'error',
    ])
  })

  it('keeps a plain-text line whole, as info at the time it was read', () => {
    for (const line of ['[WARN  tini (1)] Tini is not running as PID 1', '{not json', '[1,2]']) {
      expect(logEntryFromOutputLine(line, received)).toEqual({
        timestamp: received,
        level: 'info',
        message: line,
        fields: {},
      })
    }
  })
})
