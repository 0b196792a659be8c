import { appendFile, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UnknownUserError, UserDirectory } from '../../../src/envd/users.js'

let root: string

beforeAll(async () => {
  root = await mkdtemp('/tmp/sbt-users-')
  await mkdir(path.join(root, 'etc'))
  await writeFile(
    path.join(root, 'etc/passwd'),
    '# comment\nroot:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/bash\nbroken:x:abc\n',
  )
  await writeFile(
    path.join(root, 'etc/group'),
    'root:x:0:\nuser:x:1000:\ndocker:x:998:user,other\nsudo:x:27:user\n',
  )
})

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

describe('UserDirectory', () => {
  it('finds a user with primary and supplementary groups', async () => {
    const user = await new UserDirectory(root).lookup('user')
    expect(user).toEqual({
      name: 'user',
      uid: 1000,
      gid: 1000,
      groups: [1000, 998, 27],
      home: '/home/user',
    })
  })

  it('rejects unknown and malformed accounts', async () => {
    const users = new UserDirectory(root)
    await expect(users.lookup('nobody')).rejects.toBeInstanceOf(UnknownUserError)
    await expect(users.lookup('broken')).rejects.toBeInstanceOf(UnknownUserError)
  })

  it('knows root in an image without account files, and nobody else', async () => {
    const empty = new UserDirectory(path.join(root, 'no-such-image'))
    expect(await empty.lookup('root')).toEqual({
      name: 'root',
      uid: 0,
      gid: 0,
      groups: [0],
      home: '/root',
    })
    await expect(empty.lookup('user')).rejects.toBeInstanceOf(UnknownUserError)
  })

  it('sees accounts added after its first lookup, renamed into place or appended', async () => {
    const dir = await mkdtemp('/tmp/sbt-users-')
    await mkdir(path.join(dir, 'etc'))
    const passwd = path.join(dir, 'etc/passwd')
    await writeFile(passwd, 'root:x:0:0:root:/root:/bin/bash\n')
    const users = new UserDirectory(dir)
    try {
      await expect(users.lookup('builder')).rejects.toBeInstanceOf(UnknownUserError)
      // useradd writes a new file beside the old one and renames it over.
      await writeFile(`${passwd}+`, 'root:x:0:0:root:/root:/bin/bash\nbuilder:x:1001:1001::/b:\n')
      await rename(`${passwd}+`, passwd)
      expect((await users.lookup('builder')).uid).toBe(1001)
      await appendFile(passwd, 'later:x:1002:1002::/l:\n')
      expect((await users.lookup('later')).uid).toBe(1002)
      await writeFile(path.join(dir, 'etc/group'), 'extra:x:50:later\n')
      expect((await users.lookup('later')).groups).toEqual([1002, 50])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('names owners and groups, falling back to the number', async () => {
    const names = await new UserDirectory(root).names()
    expect(names.user(1000)).toBe('user')
    expect(names.group(998)).toBe('docker')
    expect(names.user(4242)).toBe('4242')
  })
})
