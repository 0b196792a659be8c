import { execFile } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, realpath, rm } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setprivPrefix } from '../../../../src/envd/process/setpriv-prefix.js'
import {
  asUser,
  collect,
  createTestService,
  type ProcessClient,
  TEST_ACCOUNT,
} from './process-client.js'

const run = promisify(execFile)

/**
 * A toolbox laid out as sandboxes mount it at `/.sandbar`: the host's loader, `setpriv` and the
 * libraries `ldd` lists for it, copied (not linked) so nothing resolves back to the host's.
 */
async function buildToolbox(): Promise<string> {
  const dir = await mkdtemp('/tmp/sbt-toolbox-')
  await mkdir(path.join(dir, 'lib'))
  await mkdir(path.join(dir, 'bin'))
  const loader = await realpath('/lib64/ld-linux-x86-64.so.2')
  await copyFile(loader, path.join(dir, 'lib/ld-linux-x86-64.so.2'))
  await copyFile('/usr/bin/setpriv', path.join(dir, 'bin/setpriv'))
  const { stdout } = await run('ldd', ['/usr/bin/setpriv'])
  for (const match of stdout.matchAll(/^\s*(\S+) => (\/\S+)/gm)) {
    const [, name, file] = match
    if (name === undefined || file === undefined) continue
    await copyFile(await realpath(file), path.join(dir, 'lib', name))
  }
  return dir
}

let toolbox: string
let client: ProcessClient
let dispose: () => Promise<void>

beforeAll(async () => {
  toolbox = await buildToolbox()
  ;({ client, dispose } = await createTestService(setprivPrefix(toolbox)))
})

afterAll(async () => {
  await dispose?.()
  if (toolbox !== undefined) await rm(toolbox, { recursive: true, force: true })
})

const asTestUser = { headers: asUser(TEST_ACCOUNT.name) }
const groups = `${TEST_ACCOUNT.uid} ${TEST_ACCOUNT.extraGid}`

describe('setpriv from a toolbox (SANDBAR_TOOLBOX)', () => {
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

  it('really goes through the toolbox: without its setpriv, the loader fails the start', async () => {
    const broken = await mkdtemp('/tmp/sbt-toolbox-')
    const service = await createTestService(setprivPrefix(broken))
    try {
      await mkdir(path.join(broken, 'lib'))
      await copyFile(
        path.join(toolbox, 'lib/ld-linux-x86-64.so.2'),
        path.join(broken, 'lib/ld-linux-x86-64.so.2'),
      )
      const result = await collect(service.client.start({ process: { cmd: 'true', args: [] } }))
      expect(result.end).toMatchObject({ exitCode: 127, exited: true })
      expect(result.stderr).toContain(path.join(broken, 'bin/setpriv'))
    } finally {
      await service.dispose()
      await rm(broken, { recursive: true, force: true })
    }
  })
})
