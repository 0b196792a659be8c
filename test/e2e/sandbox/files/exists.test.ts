import { expect } from 'vitest'
import { sandboxTest } from '../../setup.js'

sandboxTest('a written file and a made directory exist', async ({ sandbox, testDir }) => {
  await sandbox.files.write(`${testDir}/here.txt`, 'x')
  await sandbox.files.makeDir(`${testDir}/dir`)
  expect(await sandbox.files.exists(`${testDir}/here.txt`)).toBe(true)
  expect(await sandbox.files.exists(`${testDir}/dir`)).toBe(true)
})

sandboxTest('a missing path does not exist', async ({ sandbox, testDir }) => {
  expect(await sandbox.files.exists(`${testDir}/not-here`)).toBe(false)
  expect(await sandbox.files.exists(`${testDir}/not/here/either`)).toBe(false)
})

sandboxTest('a removed file no longer exists', async ({ sandbox, testDir }) => {
  await sandbox.files.write(`${testDir}/gone.txt`, 'x')
  await sandbox.files.remove(`${testDir}/gone.txt`)
  expect(await sandbox.files.exists(`${testDir}/gone.txt`)).toBe(false)
})

sandboxTest('a dangling symlink still exists', async ({ sandbox, testDir }) => {
  await sandbox.commands.run(`ln -s nowhere ${testDir}/dangling`)
  expect(await sandbox.files.exists(`${testDir}/dangling`)).toBe(true)
})
