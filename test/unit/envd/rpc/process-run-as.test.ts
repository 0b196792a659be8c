import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAsPath } from '../../../../src/envd/process/run-as-path.js'
import { testRunAs } from '../../../support/run-as.js'
import {
  asUser,
  collect,
  createTestService,
  type ProcessClient,
  TEST_ACCOUNT,
} from './process-client.js'

/** A toolbox laid out as sandboxes mount it at `/.sandbar`, holding only envd's run-as. */
async function buildToolbox(): Promise<string> {
  const dir = await mkdtemp('/tmp/sbt-toolbox-')
  await mkdir(path.join(dir, 'envd'))
  await copyFile(await testRunAs(), path.join(dir, 'envd/run-as'))
  return dir
}

let toolbox: string
let client: ProcessClient
let dispose: () => Promise<void>

beforeAll(async () => {
  toolbox = await buildToolbox()
  ;({ client, dispose } = await createTestService(runAsPath(toolbox)))
})

afterAll(async () => {
  await dispose?.()
  if (toolbox !== undefined) await rm(toolbox, { recursive: true, force: true })
})

const asTestUser = { headers: asUser(TEST_ACCOUNT.name) }
const groups = `${TEST_ACCOUNT.uid} ${TEST_ACCOUNT.extraGid}`

describe('run-as from a toolbox (SANDBAR_TOOLBOX)', () => {
  it('drops a pipe process to the user’s gid and supplementary groups', async () => {
    const result = await collect(client.start({ process: { cmd: 'id', args: ['-G'] } }, asTestUser))
    expect(result.end).toMatchObject({ exitCode: 0, exited: true })
    expect(result.stdout).toBe(`${groups}\n`)
  })

  it('drops a PTY process the same way', async () => {
    const result = await collect(
      client.start(
        { process: { cmd: 'id', args: ['-G'] }, pty: { size: { cols: 80, rows: 24 } } },
        asTestUser,
      ),
    )
    expect(result.end).toMatchObject({ exitCode: 0, exited: true })
    expect(result.pty).toBe(`${groups}\r\n`)
  })

  it('leaves the user process the rootfs’s own libc and no loader variables', async () => {
    // `cat` maps the libraries its own loader chose; `env` shows what the process inherited.
    const result = await collect(
      client.start(
        { process: { cmd: '/bin/sh', args: ['-c', 'cat /proc/self/maps; env'] } },
        asTestUser,
      ),
    )
    expect(result.end).toMatchObject({ exitCode: 0 })
    expect(result.stdout).toContain('libc.so.6')
    expect(result.stdout).not.toContain(toolbox)
    expect(result.stdout).not.toMatch(/^LD_/m)
  })

  it('starts the command with no signal ignored or blocked, as a shell would', async () => {
    // envd itself ignores SIGPIPE, and glibc's threads keep two signals of their own.
    const result = await collect(
      client.start(
        { process: { cmd: '/bin/sh', args: ['-c', 'grep -E "^Sig(Ign|Blk)" /proc/self/status'] } },
        asTestUser,
      ),
    )
    expect(result.stdout).toBe('SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n')
  })

  it('really goes through the toolbox: without its run-as, the start fails', async () => {
    const empty = await mkdtemp('/tmp/sbt-toolbox-')
    const service = await createTestService(runAsPath(empty))
    try {
      const started = collect(service.client.start({ process: { cmd: 'true', args: [] } }))
      await expect(started).rejects.toThrow(path.join(empty, 'envd/run-as'))
    } finally {
      await service.dispose()
      await rm(empty, { recursive: true, force: true })
    }
  })
})
