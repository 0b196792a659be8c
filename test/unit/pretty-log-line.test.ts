import { describe, expect, it } from 'vitest'
import { createLogger } from '../../src/logger.js'
import { formatDuration, formatLogLine } from '../../src/pretty-log-line.js'

/** 12:01:02 today in the host's time zone, as the formatter shows it. */
const TIME = new Date(2026, 10, 25, 12, 1, 2).getTime()
const INFO = 30
const WARN = 40
const ERROR = 50

/** What pino writes for `logger.info(fields, msg)` from `createLogger('sandbar')`. */
function entry(msg: string, fields: Record<string, unknown> = {}, level = INFO) {
  return { level, time: TIME, pid: 4242, hostname: 'host', name: 'sandbar', msg, ...fields }
}

const plain = { color: false }

describe('formatLogLine', () => {
  it('says which sandbox was created, from what, and how long it took', () => {
    const line = formatLogLine(
      entry('sandbox created', {
        sandboxID: 'i3k2q8vxa7b9c1d2e3f4',
        teamID: '5b0c1f3e-0000-4000-8000-000000000000',
        templateID: 'base',
        durationMs: 142,
      }),
      plain,
    )
    expect(line).toBe('12:01:02  sandbox i3k2q8vx… created from base in 142 ms')
  })

  it('says a kill, pause and resume with their durations', () => {
    const sandboxID = 'i3k2q8vxa7b9c1d2e3f4'
    expect(formatLogLine(entry('sandbox killed', { sandboxID, durationMs: 31 }), plain)).toBe(
      '12:01:02  sandbox i3k2q8vx… killed in 31 ms',
    )
    expect(formatLogLine(entry('sandbox paused', { sandboxID, durationMs: 1250 }), plain)).toBe(
      '12:01:02  sandbox i3k2q8vx… paused in 1.3 s',
    )
    expect(formatLogLine(entry('sandbox resumed', { sandboxID, durationMs: 88 }), plain)).toBe(
      '12:01:02  sandbox i3k2q8vx… resumed in 88 ms',
    )
  })

  it('says start-up steps with their durations and where the api listens', () => {
    expect(formatLogLine(entry('base template ready', { durationMs: 412 }), plain)).toBe(
      '12:01:02  base template ready in 412 ms',
    )
    expect(formatLogLine(entry('api listening', { port: 3000, host: '127.0.0.1' }), plain)).toBe(
      '12:01:02  api listening on 127.0.0.1:3000',
    )
  })

  it('shows a build step with its duration, or CACHED when the cache had it', () => {
    const build = { buildID: '1f2e3d4c-5b6a-4789-8abc-def012345678', templateID: 'abc' }
    const step = '[builder 2/5] RUN apt-get install -y curl'
    expect(formatLogLine(entry('step done', { ...build, step, durationMs: 3210 }), plain)).toBe(
      `12:01:02  build abc/1f2e3d4c…  ${step}  3.2 s`,
    )
    const cached = { ...build, step: '[builder 1/5] FROM debian:bookworm', cached: true }
    expect(formatLogLine(entry('step done', { ...cached, durationMs: 2 }), plain)).toBe(
      '12:01:02  build abc/1f2e3d4c…  [builder 1/5] FROM debian:bookworm  CACHED',
    )
  })

  it('shows what a running build step printed, and the build as a whole', () => {
    const build = { buildID: '1f2e3d4c-5b6a-4789-8abc-def012345678', templateID: 'abc' }
    const step = '[builder 2/5] RUN apt-get install -y curl'
    expect(formatLogLine(entry('Setting up curl (7.88.1-10)', { ...build, step }), plain)).toBe(
      `12:01:02  build abc/1f2e3d4c…  ${step}  Setting up curl (7.88.1-10)`,
    )
    expect(formatLogLine(entry('build ready', { ...build, durationMs: 42_100 }), plain)).toBe(
      '12:01:02  build abc/1f2e3d4c… ready in 42.1 s',
    )
  })

  it('marks warnings and errors, with the error message and its stack frames', () => {
    const err = {
      type: 'Error',
      message: 'disk full',
      stack: 'Error: disk full\n    at write (file.js:1:2)\n    at main (file.js:3:4)',
    }
    const sandboxID = 'i3k2q8vxa7b9c1d2e3f4'
    expect(
      formatLogLine(entry('first metrics sample failed', { sandboxID, err }, WARN), plain),
    ).toBe('12:01:02  WARN   sandbox i3k2q8vx… first metrics sample failed: disk full')
    expect(formatLogLine(entry('request failed', { err, method: 'GET' }, ERROR), plain)).toBe(
      [
        '12:01:02  ERROR  request failed: disk full  method=GET',
        '    at write (file.js:1:2)',
        '    at main (file.js:3:4)',
      ].join('\n'),
    )
  })

  it('shows fields it has no words for as key=value, quoting values with spaces', () => {
    const fields = { table: 'sbt1', uplinks: ['eth0', 'eth1'], masquerade: true, note: 'a b' }
    expect(formatLogLine(entry('network table ready', fields), plain)).toBe(
      '12:01:02  network table ready  table=sbt1 uplinks=eth0,eth1 masquerade=true note="a b"',
    )
    expect(formatLogLine(entry('toolbox assembled', { templateID: 'base' }), plain)).toBe(
      '12:01:02  toolbox assembled  templateID=base',
    )
  })

  it('cuts a long value short, since the JSON format keeps it whole', () => {
    const closed = Array.from({ length: 12 }, (_, n) => `10.${n}.0.0/16`)
    const line = formatLogLine(entry('network table ready', { closed }), plain)
    expect(line).toBe(`12:01:02  network table ready  closed=${closed.join(',').slice(0, 59)}…`)
  })

  it("puts a program's output line after the message naming the program", () => {
    const fields = { templateID: 'base', line: 'I: Retrieving InRelease' }
    expect(formatLogLine(entry('mmdebstrap', fields), plain)).toBe(
      '12:01:02  mmdebstrap: I: Retrieving InRelease  templateID=base',
    )
  })

  it('shows control characters from sandboxes and builds as text, never as escapes', () => {
    const build = { buildID: '1f2e3d4c-5b6a-4789-8abc-def012345678', templateID: 'abc' }
    const printed = 'done\x1b]0;owned\x07\r\nnext'
    const line = formatLogLine(entry(printed, { ...build, step: '[2/5] RUN x' }), plain)
    expect(line).toBe(
      '12:01:02  build abc/1f2e3d4c…  [2/5] RUN x  done\\x1b]0;owned\\x07\\x0d\\x0anext',
    )
    expect(formatLogLine(entry('exec', { argv: '\x9b31m' }), plain)).toBe(
      '12:01:02  exec  argv=\\x9b31m',
    )
  })

  it('colours the level and dims the time only when asked', () => {
    const line = formatLogLine(entry('no default route', {}, WARN), { color: true })
    expect(line).toBe('\x1b[2m12:01:02\x1b[22m  \x1b[33mWARN \x1b[39m  no default route')
    expect(formatLogLine(entry('no default route', {}, WARN), plain)).not.toContain('\x1b')
  })
})

describe('formatDuration', () => {
  it('uses ms below a second, tenths of seconds below a minute, then minutes', () => {
    expect(formatDuration(0)).toBe('0 ms')
    expect(formatDuration(999.4)).toBe('999 ms')
    expect(formatDuration(1000)).toBe('1.0 s')
    expect(formatDuration(59_940)).toBe('59.9 s')
    expect(formatDuration(60_000)).toBe('1 min 0 s')
    expect(formatDuration(125_400)).toBe('2 min 5 s')
  })
})

describe('createLogger', () => {
  it('redacts secrets in both formats', () => {
    for (const format of ['json', 'pretty'] as const) {
      const written: string[] = []
      const destination = { write: (line: string) => void written.push(line) }
      const logger = createLogger('sandbar', { format, destination, color: false })
      logger.info({ accessToken: 'sbt-secret-1', request: { apiKey: 'sbt-secret-2' } }, 'hello')
      expect(written).toHaveLength(1)
      expect(written[0]).toContain('hello')
      expect(written[0]).toContain('[Redacted]')
      expect(written[0]).not.toContain('sbt-secret')
    }
  })

  it('writes one parseable JSON object a line in json, one readable line in pretty', () => {
    const lines = (format: 'json' | 'pretty') => {
      const written: string[] = []
      const destination = { write: (line: string) => void written.push(line) }
      createLogger('sandbar', { format, destination, color: false }).info(
        { sandboxID: 'i3k2q8vxa7b9c1d2e3f4', durationMs: 31 },
        'sandbox killed',
      )
      return written
    }
    const [json] = lines('json')
    expect(JSON.parse(json ?? '')).toMatchObject({
      level: INFO,
      msg: 'sandbox killed',
      sandboxID: 'i3k2q8vxa7b9c1d2e3f4',
      durationMs: 31,
    })
    expect(lines('pretty')).toEqual([
      expect.stringMatching(/^\d\d:\d\d:\d\d {2}sandbox i3k2q8vx… killed in 31 ms\n$/),
    ])
  })
})
