/**
 * One pino JSON log object as one line for a person at a terminal (`--log-format pretty`):
 * the time, the level when it asks for attention, and the message with the fields that
 * matter in words. Fields it has no words for follow as `key=value`.
 */

/** pino's numeric levels (pino's `levels.values`). */
const WARN = 40
const ERROR = 50

/** Fields a person at the terminal does not need: pino's own, and the one team's ID. */
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'teamID'])

/** Fields always rendered in words (describe); others only beside what gives them meaning. */
const WORDED = new Set(['sandboxID', 'buildID', 'durationMs', 'err', 'line'])

/** How many characters of an ID identify it on a line a person reads; JSON keeps it whole. */
const SHORT_ID = 8

/** The longest a `key=value` extra's value gets on a readable line; JSON keeps it whole. */
const LONGEST_VALUE = 60

const ANSI = { dim: [2, 22], yellow: [33, 39], red: [31, 39] } as const

export interface PrettyOptions {
  /** ANSI colours, for a terminal. */
  color: boolean
}

export function formatLogLine(entry: Record<string, unknown>, options: PrettyOptions): string {
  const paint = (style: keyof typeof ANSI, text: string) =>
    options.color ? `\x1b[${ANSI[style][0]}m${text}\x1b[${ANSI[style][1]}m` : text
  const level = typeof entry.level === 'number' ? entry.level : 0
  const parts = [paint('dim', clock(entry.time))]
  if (level >= ERROR) parts.push(paint('red', 'ERROR'))
  else if (level >= WARN) parts.push(paint('yellow', 'WARN '))
  parts.push(printable(describe(entry, level)))
  const extras = printable(extraFields(entry))
  if (extras !== '') parts.push(paint('dim', extras))
  const line = parts.join('  ')
  const stack = level >= ERROR ? errorOf(entry)?.stack : undefined
  if (stack === undefined) return line
  // The message is on the line already; the frames follow, indented, for whoever debugs it.
  const frames = stack.split('\n').filter((frame) => frame.startsWith('    at '))
  return [line, ...frames.map((frame) => paint('dim', printable(frame)))].join('\n')
}

/**
 * Control characters shown as `\xNN`: log fields carry what sandboxes and builds print, and
 * raw escape sequences from them would drive the operator's terminal (the JSON format escapes
 * them too). A newline so shown also keeps each event on its own line.
 */
function printable(text: string): string {
  let shown = ''
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0
    const control = code < 0x20 || (code >= 0x7f && code < 0xa0)
    shown += control ? `\\x${code.toString(16).padStart(2, '0')}` : char
  }
  return shown
}

/** `142 ms` below a second, `3.2 s` below a minute, `2 min 5 s` above. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  const seconds = Math.round(ms / 1000)
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`
}

/** The message in words: its subject (a sandbox or a build), what happened, and how long. */
function describe(entry: Record<string, unknown>, level: number): string {
  const output = text(entry.line)
  // A program's output line (mmdebstrap's, say) follows the message that names the program.
  const message = `${text(entry.msg) ?? ''}${output === undefined ? '' : `: ${output}`}`
  const duration = typeof entry.durationMs === 'number' ? formatDuration(entry.durationMs) : ''
  const error = errorOf(entry)
  const failure = error?.message === undefined ? '' : `: ${error.message}`
  const buildID = text(entry.buildID)
  if (buildID !== undefined) {
    const subject = `build ${short(text(entry.templateID) ?? '?')}/${short(buildID)}`
    const step = text(entry.step)
    if (step === undefined) {
      return `${subject} ${withoutSubject(message, 'build')}${during(duration)}${failure}`
    }
    // A finished step says only how long it took or that the cache had it, as `docker build`.
    const outcome = entry.cached === true ? 'CACHED' : duration
    const said = outcome === '' || level >= WARN ? `  ${message}${failure}` : ''
    return `${subject}  ${step}${said}${outcome === '' ? '' : `  ${outcome}`}`
  }
  const place =
    entry.host !== undefined && entry.port !== undefined ? ` on ${entry.host}:${entry.port}` : ''
  const sandboxID = text(entry.sandboxID)
  if (sandboxID !== undefined) {
    const template = text(entry.templateID)
    const from = template === undefined ? '' : ` from ${template}`
    const what = withoutSubject(message, 'sandbox')
    return `sandbox ${short(sandboxID)} ${what}${from}${place}${during(duration)}${failure}`
  }
  return `${message}${place}${during(duration)}${failure}`
}

function extraFields(entry: Record<string, unknown>): string {
  return Object.entries(entry)
    .filter(([key, value]) => value !== undefined && !HIDDEN.has(key) && !isWorded(key, entry))
    .map(([key, value]) => `${key}=${fieldValue(value)}`)
    .join(' ')
}

function isWorded(key: string, entry: Record<string, unknown>): boolean {
  switch (key) {
    case 'host':
    case 'port':
      return entry.host !== undefined && entry.port !== undefined
    // A template is worded as where a sandbox came from or what a build makes.
    case 'templateID':
      return entry.sandboxID !== undefined || entry.buildID !== undefined
    case 'step':
    case 'cached':
      return entry.buildID !== undefined
    default:
      return WORDED.has(key)
  }
}

function fieldValue(value: unknown): string {
  const shown = valueText(value)
  return shown.length > LONGEST_VALUE ? `${shown.slice(0, LONGEST_VALUE - 1)}…` : shown
}

function valueText(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)
  // Lists of names and addresses read as an operator would type them: `eth0,eth1`.
  const scalar = (item: unknown) => typeof item === 'string' || typeof item === 'number'
  if (Array.isArray(value) && value.every(scalar)) return value.join(',')
  return JSON.stringify(value)
}

/** `sandbox created` under the subject `sandbox abc…` reads `sandbox abc… created`. */
function withoutSubject(message: string, subject: string): string {
  return message.startsWith(`${subject} `) ? message.slice(subject.length + 1) : message
}

function during(duration: string): string {
  return duration === '' ? '' : ` in ${duration}`
}

function short(id: string): string {
  return id.length > SHORT_ID ? `${id.slice(0, SHORT_ID)}…` : id
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/** pino's `err` serializer output: `{ type, message, stack }`. */
function errorOf(entry: Record<string, unknown>): { message?: string; stack?: string } | undefined {
  const error = entry.err
  if (typeof error !== 'object' || error === null) return undefined
  return {
    message: 'message' in error ? text(error.message) : undefined,
    stack: 'stack' in error ? text(error.stack) : undefined,
  }
}

/** HH:MM:SS in the host's time zone, as the person's other terminal tools show it. */
function clock(time: unknown): string {
  const date = typeof time === 'number' ? new Date(time) : new Date()
  return [date.getHours(), date.getMinutes(), date.getSeconds()]
    .map((n) => String(n).padStart(2, '0'))
    .join(':')
}
