import { FileNotFoundError, InvalidArgumentError, NotFoundError, SandboxError } from 'e2b'
import { expect } from 'vitest'
import { sandboxTest } from '../../setup.js'

sandboxTest(
  'lists an empty directory, then the file written into it',
  async ({ sandbox, testDir }) => {
    expect(await sandbox.files.list(testDir)).toEqual([])
    await sandbox.files.write(`${testDir}/note.txt`, 'hello')
    const entries = await sandbox.files.list(testDir)
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({
      name: 'note.txt',
      type: 'file',
      path: `${testDir}/note.txt`,
    })
  },
)

sandboxTest(
  'depth limits how far below the directory the listing goes',
  async ({ sandbox, testDir }) => {
    await sandbox.files.makeDir(`${testDir}/a/b/c`)
    await sandbox.files.write(`${testDir}/a/b/file.txt`, 'x')
    const paths = async (depth?: number) =>
      (await sandbox.files.list(testDir, depth === undefined ? {} : { depth }))
        .map((entry) => entry.path.slice(testDir.length + 1))
        .sort()
    expect(await paths()).toEqual(['a'])
    expect(await paths(1)).toEqual(['a'])
    expect(await paths(2)).toEqual(['a', 'a/b'])
    expect(await paths(3)).toEqual(['a', 'a/b', 'a/b/c', 'a/b/file.txt'])
  },
)

sandboxTest('lists a relative path from the user home', async ({ sandbox, testDir }) => {
  await sandbox.files.write(`${testDir}/f`, 'x')
  const relative = testDir.slice('/home/user/'.length)
  const entries = await sandbox.files.list(relative)
  expect(entries.map((entry) => entry.path)).toEqual([`${testDir}/f`])
})

sandboxTest(
  'a symlinked directory lists with paths under the link',
  async ({ sandbox, testDir }) => {
    await sandbox.files.write(`${testDir}/real/inside.txt`, 'x')
    await sandbox.commands.run(`ln -s ${testDir}/real ${testDir}/link`)
    const entries = await sandbox.files.list(`${testDir}/link`)
    expect(entries.map((entry) => entry.path)).toEqual([`${testDir}/link/inside.txt`])
  },
)

sandboxTest('listing a missing directory is a FileNotFoundError', async ({ sandbox, testDir }) => {
  const listing = sandbox.files.list(`${testDir}/missing`)
  await expect(listing).rejects.toThrow(FileNotFoundError)
  await expect(sandbox.files.list(`${testDir}/missing`)).rejects.toThrow(NotFoundError)
})

sandboxTest('listing a file is an InvalidArgumentError', async ({ sandbox, testDir }) => {
  await sandbox.files.write(`${testDir}/plain.txt`, 'x')
  await expect(sandbox.files.list(`${testDir}/plain.txt`)).rejects.toThrow(InvalidArgumentError)
})

sandboxTest('the user may not list /root, root may', async ({ sandbox }) => {
  const denied = await sandbox.files.list('/root').catch((error: unknown) => error)
  expect(denied).toBeInstanceOf(SandboxError)
  expect(denied).not.toBeInstanceOf(NotFoundError)
  expect(String(denied)).toMatch(/permission denied/)
  await expect(sandbox.files.list('/root', { user: 'root' })).resolves.toBeInstanceOf(Array)
})
