import { FileNotFoundError, NotFoundError, SandboxError } from 'e2b'
import { expect } from 'vitest'
import { sandboxTest } from '../../setup.js'

sandboxTest('renames a file and returns its new info', async ({ sandbox, testDir }) => {
  await sandbox.files.write(`${testDir}/old.txt`, 'keep me')
  const info = await sandbox.files.rename(`${testDir}/old.txt`, `${testDir}/new.txt`)
  expect(info).toMatchObject({ name: 'new.txt', type: 'file', path: `${testDir}/new.txt`, size: 7 })
  expect(await sandbox.files.exists(`${testDir}/old.txt`)).toBe(false)
  expect(await sandbox.files.read(`${testDir}/new.txt`)).toBe('keep me')
})

sandboxTest('moves into directories that do not exist yet', async ({ sandbox, testDir }) => {
  await sandbox.files.write(`${testDir}/moving.txt`, 'x')
  const info = await sandbox.files.rename(`${testDir}/moving.txt`, `${testDir}/x/y/moved.txt`)
  expect(info.path).toBe(`${testDir}/x/y/moved.txt`)
  expect(await sandbox.files.getInfo(`${testDir}/x`)).toMatchObject({ type: 'dir', owner: 'user' })
})

sandboxTest('renames a directory with its contents', async ({ sandbox, testDir }) => {
  await sandbox.files.write(`${testDir}/dir/inner.txt`, 'x')
  const info = await sandbox.files.rename(`${testDir}/dir`, `${testDir}/renamed`)
  expect(info).toMatchObject({ name: 'renamed', type: 'dir' })
  expect(await sandbox.files.exists(`${testDir}/renamed/inner.txt`)).toBe(true)
})

sandboxTest('renaming a missing file is a FileNotFoundError', async ({ sandbox, testDir }) => {
  await expect(sandbox.files.rename(`${testDir}/ghost`, `${testDir}/other`)).rejects.toThrow(
    FileNotFoundError,
  )
})

sandboxTest('the user may not move a file into /root', async ({ sandbox, testDir }) => {
  await sandbox.files.write(`${testDir}/mine.txt`, 'x')
  const denied = await sandbox.files
    .rename(`${testDir}/mine.txt`, '/root/mine.txt')
    .catch((error: unknown) => error)
  expect(denied).toBeInstanceOf(SandboxError)
  expect(denied).not.toBeInstanceOf(NotFoundError)
  expect(await sandbox.files.exists(`${testDir}/mine.txt`)).toBe(true)
})
