import type { LogLevel, SandboxLogEntry } from '../store/index.js'

/** pino's numeric levels (envd logs with pino) to the contract's LogLevel. */
function levelOf(pinoLevel: unknown): LogLevel {
  if (typeof pinoLevel !== 'number') return 'info'
  if (pinoLevel >= 50) return 'error'
  if (pinoLevel >= 40) return 'warn'
  if (pinoLevel >= 30) return 'info'
  return 'debug'
}

/** pino's own keys, which become the entry's timestamp, level and message, or are noise. */
const PINO_KEYS = new Set(['level', 'time', 'msg', 'hostname', 'name'])

/**
 * One line of a sandbox's output as a log entry (§1.3 SandboxLogEntry). envd writes pino JSON
 * lines; the init and the runtime may write plain text, kept as an `info` message as it is.
 */
export function logEntryFromOutputLine(line: string, receivedAt: Date): SandboxLogEntry {
  const record = parseObject(line)
  if (record === undefined)
    return { timestamp: receivedAt, level: 'info', message: line, fields: {} }
  const fields: Record<string, string> = {}
  for (const [key, value] of Object.entries(record)) {
    if (PINO_KEYS.has(key) || value === null || value === undefined) continue
    fields[key] = typeof value === 'string' ? value : JSON.stringify(value)
  }
  return {
    timestamp: typeof record.time === 'number' ? new Date(record.time) : receivedAt,
    level: levelOf(record.level),
    message: typeof record.msg === 'string' ? record.msg : '',
    fields,
  }
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
