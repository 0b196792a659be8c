import { type Logger, pino } from 'pino'

export type { Logger }

/** The one structured logger: JSON lines to stderr, level from SANDBAR_LOG_LEVEL (default `info`). */
export function createLogger(name: string): Logger {
  return pino({ name, level: process.env.SANDBAR_LOG_LEVEL ?? 'info' }, pino.destination(2))
}
