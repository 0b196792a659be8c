import type { LogLevel, SandboxLogEntry } from '../store/index.js'

/** pino's numeric levels (envd logs with pino) to the contract's LogLevel. */
function levelOf(pinoLevel: unknown): LogLevel {
  if (typeof pinoLevel !== 'number') return 'info'
  if (pinoLevel >= 50) return 'error'
  if (pinoLevel >= 40) return 'warn'
  if (pinoLevel >= 30) return 'info'
  return 'debug'
}

/**
 * Keys a line's fields never carry: pino's own, which become the entry's timestamp, level and
 * message or are noise, and the service's, which mark lifecycle events (`event`) and who
 * wrote an entry (`source`) — a sandbox line cannot pose as the service.
 */
const DROPPED_KEYS = new Set(['level', 'time', 'msg', 'hostname', 'name', 'event', 'source'])

/** When a sandbox's lines may say they were written: from its start until they were read. */
export interface OutputWindow {
  startedAt: Date
  receivedAt: Date
}

/**
 * One line of a sandbox's output as a log entry (§1.3 SandboxLogEntry), marked as the
 * sandbox's own (`fields.source: 'sandbox'`). envd writes pino JSON lines; the init and the
 * runtime may write plain text, kept as an `info` message as it is. Anything in the sandbox
 * can write these lines (its root included), so a line's level is kept as the sandbox's word,
 * while a time outside the window becomes the time it was read: a line dated in the future
 * would outlive retention and sort after everything else.
 */
export function logEntryFromOutputLine(line: string, window: OutputWindow): SandboxLogEntry {
  const source = { source: 'sandbox' }
  const record = parseObject(line)
  if (record === undefined)
    return { timestamp: window.receivedAt, level: 'info', message: line, fields: source }
  const fields: Record<string, string> = {}
  for (const [key, value] of Object.entries(record)) {
    if (DROPPED_KEYS.has(key) || value === null || value === undefined) continue
    fields[key] = typeof value === 'string' ? value : JSON.stringify(value)
  }
  return {
    timestamp: timeWithin(record.time, window),
    level: levelOf(record.level),
    message: typeof record.msg === 'string' ? record.msg : '',
    fields: { ...fields, ...source },
  }
}

function timeWithin(time: unknown, window: OutputWindow): Date {
  const inWindow =
    typeof time === 'number' &&
    time >= window.startedAt.getTime() &&
    time <= window.receivedAt.getTime()
  return inWindow ? new Date(time) : window.receivedAt
}

function parseObject(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined
  try {
    const value: unknown = JSON.parse(line)
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}
