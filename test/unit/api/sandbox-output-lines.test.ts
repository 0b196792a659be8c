import { describe, expect, it } from 'vitest'
import { logEntryFromOutputLine } from '../../../src/api/sandbox-output-lines.js'

const received = new Date('2026-11-21T10:00:00.000Z')
const window = { startedAt: new Date('2026-11-21T09:00:00.000Z'), receivedAt: received }

describe('a sandbox output line as a log entry', () => {
  it('reads envd’s pino line: time, level, message, and the rest as string fields', () => {
    const line = JSON.stringify({
      level: 30,
      time: Date.parse('2026-11-21T09:59:58.000Z'),
      pid: 412,
      hostname: 'sandbox',
      name: 'envd',
      msg: 'process started',
      cmd: ['/bin/bash', '-l', '-c', 'ls'],
      tag: null,
      user: 'user',
    })
    expect(logEntryFromOutputLine(line, window)).toEqual({
      timestamp: new Date('2026-11-21T09:59:58.000Z'),
      level: 'info',
      message: 'process started',
      fields: { pid: '412', cmd: '["/bin/bash","-l","-c","ls"]', user: 'user', source: 'sandbox' },
    })
  })

  it('maps every pino level to the contract’s four', () => {
    const levelOf = (level: number) =>
      logEntryFromOutputLine(JSON.stringify({ level, msg: 'x' }), window).level
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
      expect(logEntryFromOutputLine(line, window)).toEqual({
        timestamp: received,
        level: 'info',
        message: line,
        fields: { source: 'sandbox' },
      })
    }
  })

  it('dates a line outside the sandbox life when it was read, and never as the service', () => {
    for (const time of [Date.parse('2100-01-01T00:00:00Z'), Date.parse('2026-11-21T08:00:00Z')]) {
      const forged = JSON.stringify({
        level: 50,
        time,
        msg: 'sandbox killed',
        event: 'killed',
        source: 'sandbar',
        sandboxID: 'other',
      })
      expect(logEntryFromOutputLine(forged, window)).toEqual({
        timestamp: received,
        level: 'error',
        message: 'sandbox killed',
        fields: { sandboxID: 'other', source: 'sandbox' },
      })
    }
  })
})
