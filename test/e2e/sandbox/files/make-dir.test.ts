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

sandboxTest('the user may not create in /root; root may, owning it', async ({ sandbox }) => {
  const name = `/root/${uniqueName()}`
  const denied = await sandbox.files.makeDir(name).catch((error: unknown) => error)
  expect(denied).toBeInstanceOf(SandboxError)
  expect(denied).not.toBeInstanceOf(NotFoundError)
  expect(String(denied)).toMatch(/permission denied/)
  expect(await sandbox.files.makeDir(name, { user: 'root' })).toBe(true)
  expect(await sandbox.files.getInfo(name, { user: 'root' })).toMatchObject({ owner: 'root' })
  await sandbox.files.remove(name, { user: 'root' })
})
