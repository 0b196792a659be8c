import { chmod, lstat, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Code } from '@connectrpc/connect'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { replaceMetadata } from '../../../../src/envd/fs/xattr-metadata.js'
import { FileType } from '../../../../src/envd/gen/filesystem/filesystem_pb.js'
import { rejection } from './connect-rejection.js'
import { asUser, createTestFilesystem, type FilesystemClient } from './filesystem-client.js'

let client: FilesystemClient
let dir: string
let dispose: () => Promise<void>

beforeEach(async () => {
  ;({ client, dir, dispose } = await createTestFilesystem())
})

afterEach(async () => {
  await dispose()
})

describe('Stat', () => {
  test('describes a file the way E2B does', async () => {
    const file = path.join(dir, 'a.txt')
    await writeFile(file, 'hello')
    await chmod(file, 0o640)
    await replaceMetadata(file, { purpose: 'test' })
    const { entry } = await client.stat({ path: 'a.txt' })
    expect(entry).toMatchObject({
      name: 'a.txt',
      type: FileType.FILE,
      path: file,
      size: 5n,
      mode: 0o640,
      permissions: '-rw-r-----',
      owner: 'root',
      group: 'root',
      metadata: { purpose: 'test' },
    })
    expect(entry?.symlinkTarget).toBeUndefined()
    const modified = Number(entry?.modifiedTime?.seconds) * 1000
    expect(Math.abs(modified - (await stat(file)).mtimeMs)).toBeLessThan(1000)
  })

  test('resolves ~ to the user home and reports directories', async () => {
    const { entry } = await client.stat({ path: '~' })
    expect(entry).toMatchObject({ path: dir, type: FileType.DIRECTORY, name: path.basename(dir) })
    expect(entry?.permissions).toMatch(/^d/)
  })

  test('a symlink has its target type and mode, and its own permissions string', async () => {
    const target = path.join(dir, 'target')
    await mkdir(target, { mode: 0o700 })
    await symlink('target', path.join(dir, 'link'))
    const { entry } = await client.stat({ path: path.join(dir, 'link') })
    expect(entry).toMatchObject({
      name: 'link',
      type: FileType.DIRECTORY,
      path: path.join(dir, 'link'),
      mode: 0o700,
      permissions: 'Lrwxrwxrwx',
      symlinkTarget: target,
    })
  })

  test('a dangling symlink has no type and points at itself, as in E2B', async () => {
    const link = path.join(dir, 'dangling')
    await symlink('nowhere', link)
    const { entry } = await client.stat({ path: link })
    expect(entry).toMatchObject({ type: FileType.UNSPECIFIED, mode: 0, symlinkTarget: link })
  })

  test('a missing path is not_found and names the path', async () => {
    const error = await rejection(client.stat({ path: 'missing' }))
    expect(error.code).toBe(Code.NotFound)
    expect(error.rawMessage).toBe(`file not found: ${path.join(dir, 'missing')}`)
  })
})

describe('MakeDir', () => {
  test('creates missing parents and returns the entry', async () => {
    const { entry } = await client.makeDir({ path: 'a/b/c' })
    expect(entry).toMatchObject({ name: 'c', type: FileType.DIRECTORY, path: `${dir}/a/b/c` })
    expect((await stat(path.join(dir, 'a/b/c'))).isDirectory()).toBe(true)
  })

  test('an existing directory is already_exists, an existing file invalid_argument', async () => {
    await writeFile(path.join(dir, 'file'), '')
    expect((await rejection(client.makeDir({ path: dir }))).code).toBe(Code.AlreadyExists)
    expect((await rejection(client.makeDir({ path: 'file' }))).code).toBe(Code.InvalidArgument)
    expect((await rejection(client.makeDir({ path: 'file/sub' }))).code).toBe(Code.InvalidArgument)
  })

  test('directories created for a user belong to that user', async () => {
    await chmod(dir, 0o777)
    await client.makeDir({ path: `${dir}/mine/deeper` }, asUser('nobody'))
    for (const created of ['mine', 'mine/deeper']) {
      const info = await stat(path.join(dir, created))
      expect([info.uid, info.gid]).toEqual([65534, 65534])
    }
    expect((await stat(dir)).uid).toBe(0)
  })

  test('where a user may not create, root creates for it, never through a symlink', async () => {
    await chmod(dir, 0o755)
    const { entry } = await client.makeDir({ path: `${dir}/x/y` }, asUser('nobody'))
    expect(entry).toMatchObject({ name: 'y', path: `${dir}/x/y`, type: FileType.DIRECTORY })
    for (const created of ['x', 'x/y']) {
      expect((await stat(path.join(dir, created))).uid).toBe(65534)
    }
    await mkdir(path.join(dir, 'closed'), { mode: 0o700 })
    await symlink(path.join(dir, 'closed'), path.join(dir, 'link'))
    const error = await rejection(client.makeDir({ path: `${dir}/link/z` }, asUser('nobody')))
    expect(error.code).toBe(Code.PermissionDenied)
    expect(error.rawMessage).toContain(dir)
    await expect(lstat(path.join(dir, 'closed/z'))).rejects.toThrow()
  })

  test('an unknown user is unauthenticated', async () => {
    const error = await rejection(client.makeDir({ path: 'x' }, asUser('sbt-nobody-here')))
    expect(error.code).toBe(Code.Unauthenticated)
  })
})

describe('Move', () => {
  test('moves into new parent directories and returns the moved entry', async () => {
    await writeFile(path.join(dir, 'from.txt'), 'data')
    const { entry } = await client.move({ source: 'from.txt', destination: 'new/dir/to.txt' })
    expect(entry).toMatchObject({ name: 'to.txt', type: FileType.FILE, size: 4n })
    expect(entry?.path).toBe(path.join(dir, 'new/dir/to.txt'))
    expect(await readFile(path.join(dir, 'new/dir/to.txt'), 'utf8')).toBe('data')
    await expect(lstat(path.join(dir, 'from.txt'))).rejects.toThrow()
  })

  test('a missing source is not_found', async () => {
    const error = await rejection(client.move({ source: 'nope', destination: 'there' }))
    expect(error.code).toBe(Code.NotFound)
    expect(error.rawMessage).toContain(path.join(dir, 'nope'))
  })
})

describe('Remove', () => {
  test('removes a directory tree', async () => {
    await mkdir(path.join(dir, 'tree/sub'), { recursive: true })
    await writeFile(path.join(dir, 'tree/sub/f'), 'x')
    await client.remove({ path: 'tree' })
    await expect(lstat(path.join(dir, 'tree'))).rejects.toThrow()
  })

  test('a missing path is not an error', async () => {
    await expect(client.remove({ path: 'never-was' })).resolves.toBeDefined()
  })

  test('a user may not remove from a directory it cannot write', async () => {
    await writeFile(path.join(dir, 'keep'), 'x')
    await chmod(dir, 0o755)
    const error = await rejection(client.remove({ path: `${dir}/keep` }, asUser('nobody')))
    expect(error.code).toBe(Code.PermissionDenied)
    expect((await stat(path.join(dir, 'keep'))).isFile()).toBe(true)
  })
})

describe('ListDir', () => {
  beforeEach(async () => {
    await mkdir(path.join(dir, 'tree/sub/deeper'), { recursive: true })
    await writeFile(path.join(dir, 'tree/top.txt'), 'x')
    await writeFile(path.join(dir, 'tree/sub/inner.txt'), 'x')
  })

  async function listed(request: { path: string; depth?: number }): Promise<string[]> {
    const { entries } = await client.listDir(request)
    return entries.map((entry) => entry.path).sort()
  }

  test('depth 0 and 1 list the direct entries only', async () => {
    const direct = [`${dir}/tree/sub`, `${dir}/tree/top.txt`]
    expect(await listed({ path: 'tree', depth: 0 })).toEqual(direct)
    expect(await listed({ path: 'tree', depth: 1 })).toEqual(direct)
  })

  test('depth 2 descends one level more', async () => {
    expect(await listed({ path: 'tree', depth: 2 })).toEqual([
      `${dir}/tree/sub`,
      `${dir}/tree/sub/deeper`,
      `${dir}/tree/sub/inner.txt`,
      `${dir}/tree/top.txt`,
    ])
  })

  test('a symlinked root is followed and entries keep the requested path', async () => {
    await symlink(path.join(dir, 'tree'), path.join(dir, 'alias'))
    expect(await listed({ path: 'alias' })).toEqual([`${dir}/alias/sub`, `${dir}/alias/top.txt`])
  })

  test('symlinks below the root are listed but not descended', async () => {
    await symlink(path.join(dir, 'tree/sub'), path.join(dir, 'tree/link'))
    const paths = await listed({ path: 'tree', depth: 3 })
    expect(paths).toContain(`${dir}/tree/link`)
    expect(paths.filter((p) => p.startsWith(`${dir}/tree/link/`))).toEqual([])
  })

  test('errors: missing, not a directory, symlink loop', async () => {
    expect((await rejection(client.listDir({ path: 'missing' }))).code).toBe(Code.NotFound)
    expect((await rejection(client.listDir({ path: 'tree/top.txt' }))).code).toBe(
      Code.InvalidArgument,
    )
    await symlink(path.join(dir, 'loop'), path.join(dir, 'loop'))
    expect((await rejection(client.listDir({ path: 'loop' }))).code).toBe(Code.FailedPrecondition)
  })

  test('a user needs read permission on the directory', async () => {
    await chmod(path.join(dir, 'tree'), 0o700)
    const error = await rejection(client.listDir({ path: `${dir}/tree` }, asUser('nobody')))
    expect(error.code).toBe(Code.PermissionDenied)
  })
})
