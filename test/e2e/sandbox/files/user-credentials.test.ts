import { NotFoundError, SandboxError } from 'e2b'
import { describe, expect } from 'vitest'
import { sandboxTest, uniqueName } from '../../setup.js'

/**
 * envd acts for the request user with that user's credentials, so the kernel decides: search
 * permission on every directory of the path, symlinks resolved as the user, each step checked
 * when it happens. Only creating a new file or directory the kernel denies is retried as root,
 * as E2B's envd does it, never through a symlink (root-create.test.ts). `/root` is `0700` and
 * root's; `user` is uid 1000.
 */
describe('file access is decided with the request user’s credentials', () => {
  sandboxTest(
    'a 0644 file inside root’s 0700 directory is not readable by user',
    async ({ sandbox }) => {
      const dir = `/root/${uniqueName()}`
      const file = `${dir}/open.txt`
      await sandbox.files.write(file, 'behind a closed door', { user: 'root' })
      try {
        await sandbox.commands.run(`chmod 755 ${dir} && chmod 644 ${file}`, { user: 'root' })
        expect(await sandbox.files.read(file, { user: 'root' })).toBe('behind a closed door')
        const denied = sandbox.files.read(file)
        await expect(denied).rejects.toBeInstanceOf(SandboxError)
        await expect(denied).rejects.toThrow(`403: permission denied: cannot read '${file}'`)
        const info = await sandbox.files.getInfo(file).catch((error: unknown) => error)
        expect(info).toBeInstanceOf(SandboxError)
        expect(info).not.toBeInstanceOf(NotFoundError)
        expect(String(info)).toMatch(/permission denied/)
        const listing = await sandbox.files.list(dir).catch((error: unknown) => error)
        expect(listing).toBeInstanceOf(SandboxError)
        expect(String(listing)).toMatch(/permission denied/)
      } finally {
        await sandbox.files.remove(dir, { user: 'root' })
      }
    },
  )

  sandboxTest('a user-owned symlink does not lend root’s reach', async ({ sandbox, testDir }) => {
    const secret = `/root/${uniqueName()}.txt`
    await sandbox.files.write(secret, 'root only', { user: 'root' })
    try {
      // World-readable and world-writable by its bits: only /root's 0700 keeps user out.
      await sandbox.commands.run(`chmod 666 ${secret}`, { user: 'root' })
      await sandbox.commands.run(`ln -s ${secret} ${testDir}/link`)
      await expect(sandbox.files.read(`${testDir}/link`)).rejects.toThrow(
        `403: permission denied: cannot read '${testDir}/link'`,
      )
      await expect(sandbox.files.write(`${testDir}/link`, 'overwritten')).rejects.toThrow(
        `403: permission denied: cannot write '${testDir}/link'`,
      )
      expect(await sandbox.files.read(secret, { user: 'root' })).toBe('root only')
      const owner = await sandbox.commands.run(`stat -c %U ${secret}`, { user: 'root' })
      expect(owner.stdout).toBe('root\n')
    } finally {
      await sandbox.files.remove(secret, { user: 'root' })
    }
  })

  sandboxTest(
    'in a root-owned 0755 directory user creates its own files but cannot overwrite root’s',
    async ({ sandbox, testDir }) => {
      const dir = `${testDir}/rootdir`
      await sandbox.files.makeDir(dir, { user: 'root' })
      await sandbox.files.write(`${dir}/root.txt`, 'root may', { user: 'root' })
      expect(await sandbox.files.read(`${dir}/root.txt`)).toBe('root may')
      const overwrite = sandbox.files.write(`${dir}/root.txt`, 'user may not')
      await expect(overwrite).rejects.toThrow(
        `403: permission denied: cannot write '${dir}/root.txt'`,
      )
      // New names are created for the user, as E2B's envd (root) does, and belong to it.
      await sandbox.files.write(`${dir}/sub/new.txt`, 'x')
      expect(await sandbox.files.makeDir(`${dir}/made`)).toBe(true)
      for (const entry of ['sub', 'sub/new.txt', 'made']) {
        expect(await sandbox.files.getInfo(`${dir}/${entry}`)).toMatchObject({ owner: 'user' })
      }
      expect(await sandbox.files.read(`${dir}/root.txt`)).toBe('root may')
    },
  )

  sandboxTest(
    'user cannot remove or move what root keeps in a user directory',
    async ({ sandbox, testDir }) => {
      const dir = `${testDir}/rootdir`
      await sandbox.files.write(`${dir}/kept.txt`, 'x', { user: 'root' })
      const removed = await sandbox.files.remove(dir).catch((error: unknown) => error)
      expect(String(removed)).toMatch(/permission denied/)
      expect(await sandbox.files.exists(`${dir}/kept.txt`)).toBe(true)
      const moved = await sandbox.files
        .rename(`${dir}/kept.txt`, `${testDir}/taken.txt`)
        .catch((error: unknown) => error)
      expect(String(moved)).toMatch(/permission denied/)
      expect(await sandbox.files.exists(`${dir}/kept.txt`)).toBe(true)
      await sandbox.files.remove(dir, { user: 'root' })
      expect(await sandbox.files.exists(dir)).toBe(false)
    },
  )

  sandboxTest(
    'a symlink swapped while uploading never lands a file where user may not write',
    async ({ sandbox, testDir }) => {
      const tag = uniqueName('sbt-race')
      // As user: `d` flips between a symlink to the user's own directory and one to /root.
      // A tight loop in one process: each flip is a symlink(2) and a rename(2).
      const flip =
        "import os\nwhile True:\n for t in ('mine', '/root'):\n  os.symlink(t, 'd.new'); os.rename('d.new', 'd')"
      await sandbox.commands.run(`cd ${testDir} && mkdir mine && ln -s mine d`)
      const flipper = await sandbox.commands.run(`cd ${testDir} && python3 -c "${flip}"`, {
        background: true,
      })
      const outcomes: string[] = []
      try {
        for (let i = 0; i < 150; i++) {
          await sandbox.files.write(`${testDir}/d/${tag}-${i}.txt`, 'x').then(
            () => outcomes.push('written'),
            (error: unknown) => outcomes.push(String(error)),
          )
        }
      } finally {
        await flipper.kill()
      }
      // Neither an upload nor its temporary file (`.sandbar-upload-*`) may appear in /root.
      const landed = await sandbox.commands.run('ls -a /root', { user: 'root' })
      expect(landed.stdout).not.toMatch(new RegExp(`${tag}|\\.sandbar-upload-`))
      // Each upload either went to the user's own directory or was refused, never a 500.
      for (const outcome of outcomes) expect(outcome).toMatch(/^written$|403: permission denied/)
    },
  )
})
