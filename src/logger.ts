import { type Logger, pino } from 'pino'

export type { Logger }

/**
 * Fields that hold secrets, censored wherever a log call passes them (DESIGN.md Trust: secrets
 * are never logged): a second line behind never passing them at all.
 */
const SECRET_FIELDS = ['accessToken', 'envdAccessToken', 'trafficAccessToken', 'apiKey', 'key']

/** The one structured logger: JSON lines to stderr, level from SANDBAR_LOG_LEVEL (default `info`). */
export function createLogger(name: string): Logger {
  return pino(
    {
      name,
      level: process.env.SANDBAR_LOG_LEVEL ?? 'info',
      redact: [...SECRET_FIELDS, ...SECRET_FIELDS.map((field) => `*.${field}`)],
    },
    pino.destination(2),
  )
}
