import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, it } from 'vitest'
import { runAsPath } from '../../../../src/envd/process/run-as-path.js'
import { type SpawnCommandInput, spawnCommand } from '../../../../src/envd/process/spawn-command.js'
import { testRunAs } from '../../../support/run-as.js'

let runAs = ''
beforeAll(async () => {
  runAs = await testRunAs()
})

/** Runs what spawnCommand returns, as envd does (as root), and gives back its output and code. */
async function run(input: Omit<SpawnCommandInput, 'runAs'>) {
  const { file, args } = spawnCommand({ ...input, runAs })
  return promisify(execFile)(file, args, { env: { PATH: '/usr/bin:/bin' } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  )
}

describe.runIf(process.geteuid?.() === 0)('spawnCommand through run-as', () => {
  it("runs the command with the user's uid, gid and supplementary groups", async () => {
    const credentials = { uid: 1000, gid: 1000, groups: [1000, 1500] }
    const ids = await run({ credentials, cmd: 'sh', args: ['-c', 'id -u; id -g; id -G'] })
    expect(ids).toMatchObject({ code: 0, stdout: '1000\n1000\n1000 1500\n' })
    const none = await run({ credentials: { uid: 7, gid: 8, groups: [] }, cmd: 'id', args: ['-G'] })
    expect(none.stdout).toBe('8\n')
  })

  it('raises the process’s OOM score, so the kernel kills it before envd', async () => {
    const credentials = { uid: 1000, gid: 1000, groups: [] }
    const score = await run({ credentials, cmd: 'cat', args: ['/proc/self/oom_score_adj'] })
    expect(score.stdout).toBe('100\n')
  })

  it('passes the command and its arguments through as they are, never to a shell', async () => {
    const hostile = ['"; id #', '$(id)', '`id`', '']
    const credentials = { uid: 1000, gid: 1000, groups: [] }
    const echoed = await run({ credentials, cmd: 'printf', args: ['[%s]', ...hostile] })
    expect(echoed.stdout).toBe('["; id #][$(id)][`id`][]')
  })

  it('answers a missing command as the shell did: 127 and its message', async () => {
    const credentials = { uid: 1000, gid: 1000, groups: [] }
    const missing = await run({ credentials, cmd: 'sbt-no-such-command', args: [] })
    expect(missing).toMatchObject({
      code: 127,
      stderr: 'sh: 1: exec: sbt-no-such-command: not found\n',
    })
  })
})

describe('runAsPath', () => {
  it('is the toolbox’s run-as in a sandbox, else the one beside envd’s bundle', () => {
    expect(runAsPath('/.sandbar')).toBe('/.sandbar/envd/run-as')
    expect(runAsPath(undefined)).toMatch(/\/run-as$/)
  })

  it('rejects a relative toolbox, which would resolve against each process’s cwd', () => {
    expect(() => runAsPath('sandbar')).toThrow(
      "SANDBAR_TOOLBOX must be an absolute path, got 'sandbar'",
    )
  })
})
