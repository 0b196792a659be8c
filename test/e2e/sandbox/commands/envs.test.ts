import { expect, inject } from 'vitest'
import { initEnvd } from '../../envd-namespace.js'
import { sandboxTest } from '../../setup.js'

sandboxTest('request envs reach the command', async ({ sandbox }) => {
  const result = await sandbox.commands.run('echo "$FOO $BAR"', {
    envs: { FOO: 'foo', BAR: 'b a r' },
  })
  expect(result.stdout).toBe('foo b a r\n')
  // Scoped to that one command.
  expect((await sandbox.commands.run('echo "[$FOO]"')).stdout).toBe('[]\n')
})

sandboxTest('every command sees E2B_SANDBOX=true and its user identity', async ({ sandbox }) => {
  const result = await sandbox.commands.run('echo "$E2B_SANDBOX $HOME $USER $LOGNAME"')
  expect(result.stdout).toBe('true /home/user user user\n')
  const root = await sandbox.commands.run('echo "$HOME $USER"', { user: 'root' })
  expect(root.stdout).toBe('/root root\n')
})

sandboxTest(
  'request envs override /init env vars, which override the defaults',
  async ({ sandbox }) => {
    const url = inject('envdUrl')
    await initEnvd(url, { envVars: { SBT_INIT: 'init', SBT_BOTH: 'init', E2B_SANDBOX: 'init' } })
    try {
      const result = await sandbox.commands.run('echo "$SBT_INIT $SBT_BOTH $E2B_SANDBOX"', {
        envs: { SBT_BOTH: 'request' },
      })
      expect(result.stdout).toBe('init request init\n')
    } finally {
      await initEnvd(url, { envVars: {} })
    }
    expect((await sandbox.commands.run('echo "[$SBT_INIT]"')).stdout).toBe('[]\n')
  },
)
