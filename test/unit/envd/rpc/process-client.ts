import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { type Client, createClient, createRouterTransport } from '@connectrpc/connect'
import { pino } from 'pino'
import type { EnvdContext } from '../../../../src/envd/context.js'
import { Process, type ProcessEvent, Signal } from '../../../../src/envd/gen/process/process_pb.js'
import { createProcessService } from '../../../../src/envd/rpc/process-service.js'
import { EnvdState } from '../../../../src/envd/state.js'
import { UserDirectory } from '../../../../src/envd/users.js'
import { testRunAs } from '../../../support/run-as.js'

export type ProcessClient = Client<typeof Process>

/** A test account: uid/gid 65534 (`nobody` on the host) with supplementary group 1500. */
export const TEST_ACCOUNT = { name: 'sbtuser', uid: 65534, extraGid: 1500 }

/**
 * A process service behind an in-memory Connect transport, with its own account files
 * (root, and `sbtuser` with a supplementary group), and the temp dir holding them. `runAs`
 * defaults to run-as compiled from source.
 */
export async function createTestService(runAs?: string): Promise<{
  client: ProcessClient
  state: EnvdState
  root: string
  dispose(): Promise<void>
}> {
  const root = await mkdtemp('/tmp/sbt-process-')
  await mkdir(path.join(root, 'etc'))
  await writeFile(
    path.join(root, 'etc/passwd'),
    `root:x:0:0:root:/root:/bin/bash\n${TEST_ACCOUNT.name}:x:${TEST_ACCOUNT.uid}:${TEST_ACCOUNT.uid}::${root}:/bin/sh\n`,
  )
  await writeFile(
    path.join(root, 'etc/group'),
    `root:x:0:\nsbtgrp:x:${TEST_ACCOUNT.extraGid}:${TEST_ACCOUNT.name}\n`,
  )
  const state = new EnvdState({ E2B_SANDBOX: 'true' })
  const ctx: EnvdContext = {
    state,
    users: new UserDirectory(root),
    logger: pino({ level: 'silent' }),
    runAs: runAs ?? (await testRunAs()),
  }
  const service = createProcessService(ctx)
  const transport = createRouterTransport((router) => router.service(Process, service))
  const client = createClient(Process, transport)
  return {
    client,
    state,
    root,
    dispose: async () => {
      for (const { pid } of (await client.list({})).processes) {
        await client.sendSignal({
          process: { selector: { case: 'pid', value: pid } },
          signal: Signal.SIGKILL,
        })
      }
      await rm(root, { recursive: true, force: true })
    },
  }
}

/** What a finished event stream carried, decoded. */
export interface Collected {
  pid: number
  stdout: string
  stderr: string
  pty: string
  chunkSizes: number[]
  keepalives: number
  end: Extract<ProcessEvent['event'], { case: 'end' }>['value'] | undefined
  firstCase: string | undefined
}

/** Reads a `Start`/`Connect` stream to its end. */
export async function collect(stream: AsyncIterable<{ event?: ProcessEvent }>): Promise<Collected> {
  const out: Collected = {
    pid: 0,
    stdout: '',
    stderr: '',
    pty: '',
    chunkSizes: [],
    keepalives: 0,
    end: undefined,
    firstCase: undefined,
  }
  const decoder = new TextDecoder()
  for await (const { event } of stream) {
    const e = event?.event
    out.firstCase ??= e?.case
    if (e?.case === 'start') out.pid = e.value.pid
    if (e?.case === 'keepalive') out.keepalives++
    if (e?.case === 'end') out.end = e.value
    if (e?.case === 'data' && e.value.output.case !== undefined) {
      const { case: kind, value } = e.value.output
      out.chunkSizes.push(value.length)
      out[kind] += decoder.decode(value)
    }
  }
  return out
}

/** Reads the start event, then events until `predicate` holds for the output so far. */
export async function readUntil(
  iterator: AsyncIterator<{ event?: ProcessEvent }>,
  predicate: (text: string) => boolean,
): Promise<{ pid: number; text: string }> {
  const first = await iterator.next()
  const start = first.done ? undefined : first.value.event?.event
  if (start?.case !== 'start') throw new Error(`expected a start event, got ${start?.case}`)
  let text = ''
  while (!predicate(text)) {
    const next = await iterator.next()
    if (next.done)
      throw new Error(`stream ended before the expected output; got ${JSON.stringify(text)}`)
    const e = next.value.event?.event
    if (e?.case === 'data') text += new TextDecoder().decode(e.value.output.value)
  }
  return { pid: start.value.pid, text }
}

/** Basic auth for `username`, as the SDK sends it. */
export function asUser(username: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${username}:`).toString('base64')}` }
}

export const byPid = (pid: number) => ({ selector: { case: 'pid' as const, value: pid } })
export const byTag = (tag: string) => ({ selector: { case: 'tag' as const, value: tag } })

/** Whether a pid still runs on the host (a zombie awaiting its reaper counts as gone). */
export async function isAlive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  return stat !== '' && state !== 'Z' && state !== 'X'
}
