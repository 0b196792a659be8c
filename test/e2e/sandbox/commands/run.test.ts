import { CommandExitError, InvalidArgumentError, TimeoutError } from 'e2b'
import { expect } from 'vitest'
import { sandboxTest, uniqueName } from '../../setup.js'

sandboxTest(
  'a foreground command returns its stdout, stderr and exit code',
  async ({ sandbox }) => {
    const result = await sandbox.commands.run('echo "out: !@#$%^&*()_+"; echo "line1\nline2" >&2')
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toBe('out: !@#$%^&*()_+\n')
    expect(result.stderr).toBe('line1\nline2\n')
    expect(result.error).toBeUndefined()
  },
)

sandboxTest(
  'a non-zero exit rejects with CommandExitError carrying the result',
  async ({ sandbox }) => {
    const error = await sandbox.commands
      .run('echo partial; echo oops >&2; exit 7')
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CommandExitError)
    if (!(error instanceof CommandExitError)) return
    expect(error.exitCode).toBe(7)
    expect(error.error).toBe('exit status 7')
    expect(error.stdout).toBe('partial\n')
    expect(error.stderr).toBe('oops\n')
  },
)

sandboxTest('large output arrives complete', async ({ sandbox }) => {
  const result = await sandbox.commands.run('head -c 200000 /dev/zero | tr "\\0" a')
  expect(result.stdout.length).toBe(200_000)
})

sandboxTest('commands run in the default workdir or the given cwd', async ({ sandbox }) => {
  expect((await sandbox.commands.run('pwd')).stdout).toBe('/home/user\n')
  const dir = `/tmp/${uniqueName()}`
  await sandbox.commands.run(`mkdir -p ${dir}`)
  try {
    expect((await sandbox.commands.run('pwd', { cwd: dir })).stdout).toBe(`${dir}\n`)
    expect((await sandbox.commands.run('pwd', { cwd: '~' })).stdout).toBe('/home/user\n')
  } finally {
    await sandbox.commands.run(`rm -rf ${dir}`)
  }
})

sandboxTest('a cwd that does not exist is an InvalidArgumentError', async ({ sandbox }) => {
  const error = await sandbox.commands.run('pwd', { cwd: '/no/such/dir' }).catch((e: unknown) => e)
  expect(error).toBeInstanceOf(InvalidArgumentError)
  expect(String(error)).toContain("cwd '/no/such/dir' does not exist")
})

sandboxTest('timeoutMs ends the command with TimeoutError and kills it', async ({ sandbox }) => {
  const marker = uniqueName()
  const run = sandbox.commands.run(`sleep 30 # ${marker}`, { timeoutMs: 1000 })
  await expect(run).rejects.toBeInstanceOf(TimeoutError)
  const stillListed = async () =>
    (await sandbox.commands.list()).some((p) => p.args.some((arg) => arg.includes(marker)))
  await expect.poll(stillListed, { timeout: 5000 }).toBe(false)
})
