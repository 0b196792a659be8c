import { setTimeout as sleep } from 'node:timers/promises'
import { Code } from '@connectrpc/connect'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Signal } from '../../../../src/envd/gen/process/process_pb.js'
import { rejection } from './connect-rejection.js'
import {
  asUser,
  byPid,
  byTag,
  collect,
  createTestService,
  isAlive,
  type ProcessClient,
  readUntil,
  TEST_ACCOUNT,
} from './process-client.js'

let client: ProcessClient
let root: string
let dispose: () => Promise<void>

beforeEach(async () => {
  ;({ client, root, dispose } = await createTestService())
})

afterEach(async () => {
  await dispose()
})

const sh = (script: string) => ({ cmd: '/bin/sh', args: ['-c', script] })

describe('Start', () => {
  it('streams start, stdout and stderr, then the end', async () => {
    const run = await collect(client.start({ process: sh('echo out; echo err >&2; exit 3') }))
    expect(run.firstCase).toBe('start')
    expect(run.pid).toBeGreaterThan(0)
    expect(run.stdout).toBe('out\n')
    expect(run.stderr).toBe('err\n')
    expect(run.end).toMatchObject({
      exitCode: 3,
      exited: true,
      status: 'exit status 3',
      error: 'exit status 3',
    })
  })

  it('reports a clean exit without an error', async () => {
    const run = await collect(client.start({ process: sh('true') }))
    expect(run.end).toMatchObject({ exitCode: 0, exited: true, status: 'exit status 0' })
    expect(run.end?.error).toBeUndefined()
  })

  it('splits pipe output into chunks of at most 32 KiB and loses none', async () => {
    const run = await collect(
      client.start({ process: sh('head -c 300000 /dev/zero | tr "\\0" x') }),
    )
    expect(run.stdout.length).toBe(300_000)
    expect(Math.max(...run.chunkSizes)).toBeLessThanOrEqual(32 * 1024)
  })

  it('runs with the user identity, supplementary groups, env precedence and a raised OOM score', async () => {
    const run = await collect(
      client.start(
        {
          process: {
            ...sh(
              'id -u; id -G; echo "$HOME $USER $LOGNAME $E2B_SANDBOX $MINE"; cat /proc/self/oom_score_adj; pwd',
            ),
            envs: { MINE: 'mine' },
          },
        },
        { headers: asUser(TEST_ACCOUNT.name) },
      ),
    )
    const [uid, groups, env, oom, cwd] = run.stdout.trim().split('\n')
    expect(uid).toBe(String(TEST_ACCOUNT.uid))
    expect(groups?.split(' ')).toEqual([String(TEST_ACCOUNT.uid), String(TEST_ACCOUNT.extraGid)])
    expect(env).toBe(`${root} ${TEST_ACCOUNT.name} ${TEST_ACCOUNT.name} true mine`)
    expect(oom).toBe('100')
    expect(cwd).toBe(root)
  })

  it('resolves cwd for the user and rejects one that does not exist', async () => {
    const run = await collect(client.start({ process: { ...sh('pwd'), cwd: '/tmp' } }))
    expect(run.stdout).toBe('/tmp\n')
    const error = await rejection(
      collect(client.start({ process: { ...sh('pwd'), cwd: '/nope/x' } })),
    )
    expect(error.code).toBe(Code.InvalidArgument)
    expect(error.rawMessage).toBe("cwd '/nope/x' does not exist")
  })

  it('rejects an unknown user', async () => {
    const error = await rejection(
      collect(client.start({ process: sh('true') }, { headers: asUser('ghost') })),
    )
    expect(error.code).toBe(Code.Unauthenticated)
    expect(error.rawMessage).toBe("invalid username: 'ghost'")
  })

  it('sends keepalives while the process is quiet', async () => {
    const run = await collect(
      client.start({ process: sh('sleep 2.5') }, { headers: { 'keepalive-ping-interval': '1' } }),
    )
    expect(run.keepalives).toBeGreaterThanOrEqual(1)
    expect(run.end?.exitCode).toBe(0)
  })

  it('kills the process when the Connect deadline passes', async () => {
    const controller = new AbortController()
    const stream = client.start(
      { process: sh('sleep 30') },
      { timeoutMs: 700, signal: controller.signal },
    )
    const iterator = stream[Symbol.asyncIterator]()
    const { pid } = await readUntil(iterator, () => true)
    const error = await rejection(iterator.next())
    expect(error.code).toBe(Code.DeadlineExceeded)
    await expect.poll(() => isAlive(pid), { timeout: 3000 }).toBe(false)
    const listed = async () => (await client.list({})).processes.map((p) => p.pid)
    await expect.poll(listed, { timeout: 3000 }).not.toContain(pid)
  })
})

describe('Connect and List', () => {
  it('keeps the process running when the client disconnects, without replaying output', async () => {
    const controller = new AbortController()
    const stream = client.start(
      { process: sh('echo one; read x; echo two'), stdin: true, tag: 'sbt-replay' },
      { signal: controller.signal },
    )
    const { pid } = await readUntil(stream[Symbol.asyncIterator](), (t) => t.includes('one'))
    controller.abort()
    await sleep(200)
    const listed = (await client.list({})).processes.find((p) => p.pid === pid)
    expect(listed).toMatchObject({ tag: 'sbt-replay', config: { cmd: '/bin/sh' } })

    const reconnected = collect(client.connect({ process: byTag('sbt-replay') }))
    await sleep(100)
    await client.sendInput({
      process: byPid(pid),
      input: { input: { case: 'stdin', value: new TextEncoder().encode('\n') } },
    })
    const run = await reconnected
    expect(run.pid).toBe(pid)
    expect(run.stdout).toBe('two\n')
    expect(run.end?.exitCode).toBe(0)
  })

  it('lets a late Connect by pid or tag see start and end of an exited process', async () => {
    const first = await collect(client.start({ process: sh('exit 4'), tag: 'sbt-late' }))
    for (const process of [byPid(first.pid), byTag('sbt-late')]) {
      const late = await collect(client.connect({ process }))
      expect(late.firstCase).toBe('start')
      expect(late.pid).toBe(first.pid)
      expect(late.end).toMatchObject({ exitCode: 4, status: 'exit status 4' })
    }
    expect((await client.list({})).processes.map((p) => p.pid)).not.toContain(first.pid)
  })

  it('lists running processes with their config', async () => {
    const stream = client.start({
      process: { ...sh('sleep 30'), envs: { A: 'b' }, cwd: '/tmp' },
      tag: 'sbt-list',
    })
    const { pid } = await readUntil(stream[Symbol.asyncIterator](), () => true)
    const listed = (await client.list({})).processes.find((p) => p.pid === pid)
    expect(listed?.tag).toBe('sbt-list')
    expect(listed?.config).toMatchObject({
      cmd: '/bin/sh',
      args: ['-c', 'sleep 30'],
      envs: { A: 'b' },
      cwd: '/tmp',
    })
  })

  it('answers not_found for an unknown pid or tag', async () => {
    const byPidError = await rejection(collect(client.connect({ process: byPid(999_999) })))
    expect(byPidError.code).toBe(Code.NotFound)
    expect(byPidError.rawMessage).toBe('process with pid 999999 not found')
    const byTagError = await rejection(
      client.sendSignal({ process: byTag('sbt-none'), signal: Signal.SIGKILL }),
    )
    expect(byTagError.rawMessage).toBe('process with tag sbt-none not found')
  })
})

describe('SendSignal', () => {
  it('terminates the whole process group', async () => {
    const stream = client.start({ process: sh('sleep 300 & echo $!; wait') })
    const iterator = stream[Symbol.asyncIterator]()
    const { pid, text } = await readUntil(iterator, (t) => t.endsWith('\n'))
    const child = Number(text.trim())
    await client.sendSignal({ process: byPid(pid), signal: Signal.SIGTERM })
    const rest = await collect({ [Symbol.asyncIterator]: () => iterator })
    expect(rest.end).toMatchObject({
      exitCode: -1,
      exited: false,
      status: 'signal: terminated',
      error: 'signal: terminated',
    })
    await expect.poll(() => isAlive(child), { timeout: 3000 }).toBe(false)
  })

  it('supports SIGTERM and SIGKILL only', async () => {
    const { pid } = await readUntil(
      client.start({ process: sh('sleep 30') })[Symbol.asyncIterator](),
      () => true,
    )
    const error = await rejection(
      client.sendSignal({ process: byPid(pid), signal: Signal.UNSPECIFIED }),
    )
    expect(error.code).toBe(Code.Unimplemented)
  })
})
