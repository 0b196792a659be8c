import { FileNotFoundError } from 'e2b'
import { expect } from 'vitest'
import { sandboxTest } from '../../setup.js'

sandboxTest('describes a written file', async ({ sandbox, testDir }) => {
  const before = Date.now()
  await sandbox.files.write(`${testDir}/info.txt`, 'twelve bytes')
  const info = await sandbox.files.getInfo(`${testDir}/info.txt`)
  expect(info).toMatchObject({
    name: 'info.txt',
    type: 'file',
    path: `${testDir}/info.txt`,
    size: 12,
    mode: 0o644,
    permissions: '-rw-r--r--',
    owner: 'user',
    group: 'user',
  })
  expect(info.symlinkTarget).toBeUndefined()
  expect(info.modifiedTime).toBeInstanceOf(Date)
  expect(Math.abs((info.modifiedTime?.getTime() ?? 0) - before)).toBeLessThan(10_000)
})

sandboxTest('describes a directory', async ({ sandbox, testDir }) => {
  await sandbox.files.makeDir(`${testDir}/folder`)
  const info = await sandbox.files.getInfo(`${testDir}/folder`)
  expect(info).toMatchObject({
    name: 'folder',
    type: 'dir',
    path: `${testDir}/folder`,
    mode: 0o755,
    permissions: 'drwxr-xr-x',
    owner: 'user',
  })
})

sandboxTest('resolves a relative path against the user home', async ({ sandbox, testDir }) => {
  const relative = testDir.slice('/home/user/'.length)
  expect((await sandbox.files.getInfo(relative)).path).toBe(testDir)
  expect((await sandbox.files.getInfo('~')).path).toBe('/home/user')
})

sandboxTest('a symlink reports its target type and path', async ({ sandbox, testDir }) => {
  await sandbox.files.write(`${testDir}/target.txt`, 'x')
  await sandbox.commands.run(`ln -s target.txt ${testDir}/link`)
  const info = await sandbox.files.getInfo(`${testDir}/link`)
  expect(info).toMatchObject({
    name: 'link',
    type: 'file',
    path: `${testDir}/link`,
    mode: 0o644,
    permissions: 'Lrwxrwxrwx',
    symlinkTarget: `${testDir}/target.txt`,
  })
})

sandboxTest('shows the mode string Go prints for special bits', async ({ sandbox, testDir }) => {
  await sandbox.files.makeDir(`${testDir}/shared`)
  await sandbox.commands.run(`chmod 1777 ${testDir}/shared`)
  expect((await sandbox.files.getInfo(`${testDir}/shared`)).permissions).toBe('dtrwxrwxrwx')
})

sandboxTest('root sees files owned by root', async ({ sandbox }) => {
  const info = await sandbox.files.getInfo('/root', { user: 'root' })
  expect(info).toMatchObject({
    type: 'dir',
    owner: 'root',
    group: 'root',
    permissions: 'drwx------',
  })
})

sandboxTest('a missing path is a FileNotFoundError naming it', async ({ sandbox, testDir }) => {
  const error = await sandbox.files.getInfo(`${testDir}/nope`).catch((e: unknown) => e)
  expect(error).toBeInstanceOf(FileNotFoundError)
  expect(String(error)).toContain(`${testDir}/nope`)
})
