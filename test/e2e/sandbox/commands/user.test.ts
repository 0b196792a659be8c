import { AuthenticationError } from 'e2b'
import { expect } from 'vitest'
import { sandboxTest, TEST_USER } from '../../setup.js'

sandboxTest('commands run as the default user unless told otherwise', async ({ sandbox }) => {
  expect((await sandbox.commands.run('whoami')).stdout).toBe(`${TEST_USER.name}\n`)
  expect((await sandbox.commands.run('whoami', { user: 'root' })).stdout).toBe('root\n')
  expect((await sandbox.commands.run('whoami', { user: TEST_USER.name })).stdout).toBe('user\n')
})

sandboxTest('a command carries the user supplementary groups', async ({ sandbox }) => {
  const result = await sandbox.commands.run('id -u; id -g; id -G')
  const [uid, gid, groups] = result.stdout.trim().split('\n')
  expect(uid).toBe(String(TEST_USER.uid))
  expect(gid).toBe(String(TEST_USER.gid))
  expect(groups?.split(' ')).toContain(String(TEST_USER.extraGid))
  const rootGroups = await sandbox.commands.run('id -G', { user: 'root' })
  expect(rootGroups.stdout).toBe('0\n')
})

sandboxTest('an unknown user is an AuthenticationError', async ({ sandbox }) => {
  const error = await sandbox.commands.run('whoami', { user: 'sbt-ghost' }).catch((e: unknown) => e)
  expect(error).toBeInstanceOf(AuthenticationError)
  expect(String(error)).toContain("invalid username: 'sbt-ghost'")
})
