import type { MessageInitShape } from '@bufbuild/protobuf'
import { Code } from '@connectrpc/connect'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { StreamInputRequestSchema } from '../../../../src/envd/gen/process/process_pb.js'
import { rejection } from './connect-rejection.js'
import {
  byPid,
  collect,
  createTestService,
  type ProcessClient,
  readUntil,
} from './process-client.js'

let client: ProcessClient
let dispose: () => Promise<void>

beforeEach(async () => {
  ;({ client, dispose } = await createTestService())
})

afterEach(async () => {
  await dispose()
})

const encode = (text: string) => new TextEncoder().encode(text)
const stdin = (text: string) => ({ input: { case: 'stdin' as const, value: encode(text) } })
const ptyInput = (text: string) => ({ input: { case: 'pty' as const, value: encode(text) } })

/**
 * Starts a process, reads its output until `ready` holds, and returns its pid, that output
 * and the rest of its stream, already being read.
 */
async function startAndCollect(
  request: Parameters<ProcessClient['start']>[0],
  ready: (text: string) => boolean = () => true,
) {
  const iterator = client.start(request)[Symbol.asyncIterator]()
  const { pid, text } = await readUntil(iterator, ready)
  return { pid, text, rest: collect({ [Symbol.asyncIterator]: () => iterator }) }
}

describe('pipe stdin', () => {
  it('delivers SendInput and CloseStdin to a process started with stdin', async () => {
    const { pid, rest } = await startAndCollect({ process: { cmd: 'cat', args: [] }, stdin: true })
    await client.sendInput({ process: byPid(pid), input: stdin('hello ') })
    await client.sendInput({ process: byPid(pid), input: stdin('') })
    await client.sendInput({ process: byPid(pid), input: stdin('world') })
    await client.closeStdin({ process: byPid(pid) })
    const run = await rest
    expect(run.stdout).toBe('hello world')
    expect(run.end?.exitCode).toBe(0)
  })

  it('opens a stdin pipe when the request does not say (older clients)', async () => {
    const { pid, rest } = await startAndCollect({ process: { cmd: 'cat', args: [] } })
    await client.sendInput({ process: byPid(pid), input: stdin('legacy') })
    await client.closeStdin({ process: byPid(pid) })
    expect((await rest).stdout).toBe('legacy')
  })

  it('gives a process without stdin /dev/null and refuses input for it', async () => {
    const { pid, text, rest } = await startAndCollect(
      { process: { cmd: '/bin/sh', args: ['-c', 'cat; echo eof; sleep 30'] }, stdin: false },
      (output) => output.includes('eof'),
    )
    expect(text).toBe('eof\n')
    const error = await rejection(client.sendInput({ process: byPid(pid), input: stdin('x') }))
    expect(error.code).toBe(Code.Internal)
    expect(error.rawMessage).toBe('stdin not enabled or closed')
    await client.sendSignal({ process: byPid(pid), signal: 9 })
    expect((await rest).end?.status).toBe('signal: killed')
  })

  it('refuses stdin after CloseStdin and pty input for a pipe process', async () => {
    const { pid, rest } = await startAndCollect({
      process: { cmd: 'sleep', args: ['30'] },
      stdin: true,
    })
    const ptyError = await rejection(
      client.sendInput({ process: byPid(pid), input: ptyInput('x') }),
    )
    expect(ptyError.code).toBe(Code.Internal)
    await client.closeStdin({ process: byPid(pid) })
    await client.closeStdin({ process: byPid(pid) })
    const closedError = await rejection(
      client.sendInput({ process: byPid(pid), input: stdin('x') }),
    )
    expect(closedError.rawMessage).toBe('stdin not enabled or closed')
    await client.sendSignal({ process: byPid(pid), signal: 9 })
    expect((await rest).end?.status).toBe('signal: killed')
  })

  it('accepts a StreamInput of start, data and keepalive messages', async () => {
    const { pid, rest } = await startAndCollect({ process: { cmd: 'cat', args: [] }, stdin: true })
    async function* messages(): AsyncGenerator<MessageInitShape<typeof StreamInputRequestSchema>> {
      yield { event: { case: 'start', value: { process: byPid(pid) } } }
      yield { event: { case: 'data', value: { input: stdin('streamed ') } } }
      yield { event: { case: 'keepalive', value: {} } }
      yield { event: { case: 'data', value: { input: stdin('input') } } }
    }
    await client.streamInput(messages())
    await client.closeStdin({ process: byPid(pid) })
    expect((await rest).stdout).toBe('streamed input')
  })
})

describe('PTY', () => {
  it('runs on a terminal of the requested size, resizes it and takes PTY input', async () => {
    const { pid, text, rest } = await startAndCollect(
      {
        process: {
          cmd: '/bin/sh',
          args: ['-c', 'stty size; read line; stty size; echo "got $line"'],
        },
        pty: { size: { cols: 100, rows: 30 } },
      },
      (output) => output.includes('30 100'),
    )
    await client.update({ process: byPid(pid), pty: { size: { cols: 120, rows: 50 } } })
    await client.sendInput({ process: byPid(pid), input: ptyInput('typed\n') })
    const run = await rest
    expect(text).toContain('30 100')
    expect(run.pty).toContain('50 120')
    expect(run.pty).toContain('got typed')
    expect(run.stdout).toBe('')
    expect(run.end?.exitCode).toBe(0)
    expect(Math.max(...run.chunkSizes)).toBeLessThanOrEqual(16 * 1024)
  })

  it('refuses stdin input and CloseStdin for a PTY process, and reports a kill', async () => {
    const { pid, rest } = await startAndCollect({
      process: { cmd: 'sleep', args: ['30'] },
      pty: { size: { cols: 80, rows: 24 } },
    })
    const stdinError = await rejection(client.sendInput({ process: byPid(pid), input: stdin('x') }))
    expect(stdinError.code).toBe(Code.Internal)
    const closeError = await rejection(client.closeStdin({ process: byPid(pid) }))
    expect(closeError.code).toBe(Code.Internal)
    expect(closeError.rawMessage).toContain('0x04')
    await client.sendSignal({ process: byPid(pid), signal: 9 })
    expect((await rest).end).toMatchObject({
      exitCode: -1,
      exited: false,
      status: 'signal: killed',
    })
  })
})
