import { NotFoundError, SandboxError } from 'e2b'
import { expect } from 'vitest'
import { sandboxTest, uniqueName } from '../../setup.js'

sandboxTest('removes a file', async ({ sandbox, testDir }) => {
  await sandbox.files.write(`${testDir}/bye.txt`, 'x')
  await sandbox.files.remove(`${testDir}/bye.txt`)
  expect(await sandbox.files.exists(`${testDir}/bye.txt`)).toBe(false)
})

sandboxTest('removes a directory with everything inside', async ({ sandbox, testDir }) => {
  await sandbox.files.write(`${testDir}/tree/a/b/deep.txt`, 'x')
  await sandbox.files.remove(`${testDir}/tree`)
  expect(await sandbox.files.exists(`${testDir}/tree`)).toBe(false)
  expect(await sandbox.files.list(testDir)).toEqual([])
})

sandboxTest('removing a missing path succeeds', async ({ sandbox, testDir }) => {
  await expect(sandbox.files.remove(`${testDir}/never-existed`)).resolves.toBeUndefined()
})

sandboxTest('the user may not remove what root keeps in /root', async ({ sandbox }) => {
  const name = `/root/${uniqueName()}`
  await sandbox.files.makeDir(name, { user: 'root' })
  const denied = await sandbox.files.remove(name).catch((error: unknown) => error)
  expect(denied).toBeInstanceOf(SandboxError)
  expect(denied).not.toBeInstanceOf(NotFoundError)
  expect(await sandbox.files.exists(name, { user: 'root' })).toBe(true)
  await sandbox.files.remove(name, { user: 'root' })
  expect(await sandbox.files.exists(name, { user: 'root' })).toBe(false)
})
