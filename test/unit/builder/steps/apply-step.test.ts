import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import type { BuildStep } from '../../../../src/builder/index.js'
import {
  applyStep,
  type BuildContext,
  StepError,
  type StepTools,
} from '../../../../src/builder/steps/index.js'
import { runArgv } from '../../../../src/builder/steps/run-step.js'

const context: BuildContext = { user: 'user', workdir: '/app', env: { A: '1' } }

/** Steps that fail on their arguments must fail before they touch the sandbox. */
const untouched: StepTools = {
  sandbox: {
    run: () => Promise.reject(new Error('the sandbox ran something')),
    upload: () => Promise.reject(new Error('the sandbox got an upload')),
  },
  files: { read: async () => Buffer.from('not gzip') },
}

const step = (type: string, args: string[], filesHash?: string): BuildStep => ({
  type,
  args,
  force: false,
  ...(filesHash ? { filesHash } : {}),
})

async function failure(promise: Promise<unknown>): Promise<StepError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  if (!(error instanceof StepError)) throw new Error(`expected a StepError, got ${String(error)}`)
  return error
}

describe('applyStep', () => {
  it('refuses an unknown type with the contract text, naming the type as sent', async () => {
    const error = await failure(applyStep(step('Healthcheck', ['x']), context, untouched))
    expect(error.message).toBe('command type Healthcheck is not implemented')
  })

  it('matches types case-insensitively and treats ARG as ENV, without the sandbox', async () => {
    const after = await applyStep(step('arg', ['B', '$A-2']), context, untouched)
    expect(after).toEqual({ ...context, env: { A: '1', B: '1-2' } })
  })

  it('names each bad argument before running anything', async () => {
    const cases: Array<[BuildStep, string]> = [
      [step('RUN', []), 'RUN requires a command'],
      [step('USER', []), 'USER requires a username argument'],
      [step('USER', ['bad name']), "USER name 'bad name' is not a valid user name"],
      [step('WORKDIR', []), 'WORKDIR requires a path argument'],
      [step('COPY', ['a']), 'COPY requires a local path and a container path argument'],
      [step('ADD', ['a', 'b']), 'ADD requires files hash to be set'],
      [step('COPY', ['a', 'b', '', 'rwx'], 'f'), "COPY mode 'rwx' is not an octal file mode"],
      [step('COPY', ['a', 'b'], 'f'), 'COPY files are not a gzip archive: incorrect header check'],
    ]
    for (const [bad, message] of cases) {
      expect((await failure(applyStep(bad, context, untouched))).message).toBe(message)
    }
  })

  it('uploads a COPY archive unzipped, under /tmp, before running the copy as root', async () => {
    const calls: string[] = []
    const tools: StepTools = {
      sandbox: {
        upload: async (path, data) => {
          calls.push(`upload ${path} ${data.toString()}`)
        },
        run: async (argv, options) => {
          calls.push(`run ${options.user} ${argv.slice(4).join('|')}`)
          return 0
        },
      },
      files: { read: async () => gzipSync('tar bytes') },
    }
    await applyStep(step('COPY', ['src/*.ts', 'lib/', 'www', '0644'], 'f'), context, tools)
    expect(calls[0]).toMatch(/^upload \/tmp\/sandbar-copy-[0-9a-f-]{36}\.tar tar bytes$/)
    const archive = calls[0]?.split(' ')[1]
    expect(calls[1]).toBe(`run root ${archive}|src|1|/app/lib|1|www:www|0644|user`)
  })
})

describe('runArgv', () => {
  it('passes the command as an argument to a fixed shell script, never inside it', () => {
    const argv = runArgv('echo "$HOME"; rm -rf /tmp/x')
    expect(argv.slice(0, 2)).toEqual(['/bin/sh', '-c'])
    expect(argv[2]).not.toContain('echo')
    expect(argv.slice(3)).toEqual(['sh', 'echo "$HOME"; rm -rf /tmp/x'])
  })
})
