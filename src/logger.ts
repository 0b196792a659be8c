import { type DestinationStream, type Logger, pino } from 'pino'
import { formatLogLine } from './pretty-log-line.js'

export type { Logger }

/** `json`: one JSON object a line, for machines; `pretty`: readable lines, for a person. */
export const LOG_FORMATS = ['pretty', 'json'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

/**
 * Fields that hold secrets, censored wherever a log call passes them (DESIGN.md Trust: secrets
 * are never logged): a second line behind never passing them at all.
 */
const SECRET_FIELDS = ['accessToken', 'envdAccessToken', 'trafficAccessToken', 'apiKey', 'key']

export interface LoggerOptions {
  format?: LogFormat
  /**
   * Where the lines go: stderr, unless a test reads them or envd writes them itself
   * (output-file-log.ts).
   */
  destination?: DestinationStream
  /** ANSI colours in pretty lines; by default when stderr is a terminal and NO_COLOR unset. */
  color?: boolean
}

/**
 * The one structured logger, level from SANDBAR_LOG_LEVEL (default `info`). Both formats are
 * pino's JSON underneath, so redaction happens before either is written.
 */
export function createLogger(name: string, options: LoggerOptions = {}): Logger {
  // A person's terminal gets each line as it happens, in order with what serve prints on
  // stdout; machines get pino's buffered writes, which never wait on a slow reader.
  const destination =
    options.destination ?? pino.destination({ dest: 2, sync: options.format === 'pretty' })
  const color = options.color ?? (process.stderr.isTTY && !process.env.NO_COLOR)
  return pino(
    {
      name,
      level: process.env.SANDBAR_LOG_LEVEL ?? 'info',
      redact: [...SECRET_FIELDS, ...SECRET_FIELDS.map((field) => `*.${field}`)],
    },
    options.format === 'pretty' ? prettyStream(destination, color) : destination,
  )
}

/** What the person sees when stderr is a terminal: `--log-format`'s default. */
export function defaultLogFormat(): LogFormat {
  return process.stderr.isTTY ? 'pretty' : 'json'
}

/** Rewrites each JSON line pino writes as a readable one (pretty-log-line.ts). */
function prettyStream(out: DestinationStream, color: boolean): DestinationStream {
  return {
    write(line: string) {
      out.write(`${formatLogLine(JSON.parse(line), { color })}\n`)
    },
  }
}
