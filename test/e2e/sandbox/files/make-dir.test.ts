import { InvalidArgumentError, NotFoundError, SandboxError } from 'e2b'
import { expect } from 'vitest'
import { sandboxTest, uniqueName } from '../../setup.js'

sandboxTest(
  'creates a directory once; a second time returns false',
  async ({ sandbox, testDir }) => {
    expect(await sandbox.files.makeDir(`${testDir}/new`)).toBe(true)
    expect(await sandbox.files.makeDir(`${testDir}/new`)).toBe(false)
    expect((await sandbox.files.getInfo(`${testDir}/new`)).type).toBe('dir')
  },
)

sandboxTest('creates missing parents, all owned by the user', async ({ sandbox, testDir }) => {
  expect(await sandbox.files.makeDir(`${testDir}/a/b/c`)).toBe(true)
  for (const dir of ['a', 'a/b', 'a/b/c']) {
    const info = await sandbox.files.getInfo(`${testDir}/${dir}`)
    expect(info).toMatchObject({ type: 'dir', owner: 'user', group: 'user' })
  }
})

sandboxTest('a relative path is created in the user home', async ({ sandbox, testDir }) => {
  const relative = `${testDir.slice('/home/user/'.length)}/rel`
  expect(await sandbox.files.makeDir(relative)).toBe(true)
  expect(await sandbox.files.exists(`${testDir}/rel`)).toBe(true)
})

sandboxTest('a path taken by a file is an InvalidArgumentError', async ({ sandbox, testDir }) => {
  await sandbox.files.write(`${testDir}/file`, 'x')
  await expect(sandbox.files.makeDir(`${testDir}/file`)).rejects.toThrow(InvalidArgumentError)
  await expect(sandbox.files.makeDir(`${testDir}/file/sub`)).rejects.toThrow(InvalidArgumentError)
})

sandboxTest('in /root, each directory belongs to whoever asked for it', async ({ sandbox }) => {
  const name = `/root/${uniqueName()}`
  try {
    // As on E2B, whose envd (root) creates a user's directories anywhere and gives them away.
    expect(await sandbox.files.makeDir(name)).toBe(true)
    expect(await sandbox.files.getInfo(name, { user: 'root' })).toMatchObject({ owner: 'user' })
    expect(await sandbox.files.makeDir(`${name}-root`, { user: 'root' })).toBe(true)
    expect(await sandbox.files.getInfo(`${name}-root`, { user: 'root' })).toMatchObject({
      owner: 'root',
    })
    // The user cannot see into /root, so an existing directory there is not confirmed either.
    const denied = await sandbox.files.makeDir(`${name}-root`).catch((error: unknown) => error)
    expect(denied).toBeInstanceOf(SandboxError)
    expect(denied).not.toBeInstanceOf(NotFoundError)
    expect(String(denied)).toMatch(/permission denied/)
  } finally {
    await sandbox.commands.run(`rm -rf ${name} ${name}-root`, { user: 'root' })
  }
})
