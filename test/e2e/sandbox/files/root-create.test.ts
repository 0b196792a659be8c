import type { Sandbox } from 'e2b'
import { describe, expect } from 'vitest'
import { sandboxTest, uniqueName } from '../../setup.js'

async function ownerOf(sandbox: Sandbox, entry: string): Promise<string> {
  const stat = await sandbox.commands.run(`stat -c %U ${entry}`, { user: 'root' })
  return stat.stdout.trim()
}

/**
 * E2B's envd runs as root: it creates the request user's missing directories and new files
 * anywhere and gives them to the user. envd does the same where the kernel denies the user,
 * but never through a symlink, and overwriting still needs the user's own write permission.
 */
describe('the default user creates files and directories where E2B lets it', () => {
  sandboxTest('writes multiple files, at / and at home (SDK scenario)', async ({ sandbox }) => {
    const tag = uniqueName()
    const files = Array.from({ length: 10 }, (_, i) => ({
      path: i % 2 === 0 ? `/${tag}-${i}/multi_test_file${i}.txt` : `/home/user/${tag}-${i}.txt`,
      data: `This is a test file ${i}.`,
    }))
    try {
      const infos = await sandbox.files.write(files)
      expect(infos.map((info) => info.path)).toEqual(files.map((file) => file.path))
      for (const file of files) {
        expect(await sandbox.files.exists(file.path)).toBe(true)
        expect(await sandbox.files.read(file.path)).toBe(file.data)
        expect(await ownerOf(sandbox, file.path)).toBe('user')
      }
      expect(await ownerOf(sandbox, `/${tag}-0`)).toBe('user')
    } finally {
      await sandbox.commands.run(`rm -rf /${tag}-* /home/user/${tag}-*`, { user: 'root' })
    }
  })

  sandboxTest(
    'a new file in a root-owned directory is the user’s; root’s files stay root’s',
    async ({ sandbox }) => {
      const dir = `/${uniqueName()}`
      await sandbox.commands.run(`mkdir -m 755 ${dir} && echo kept > ${dir}/root.txt`, {
        user: 'root',
      })
      try {
        await sandbox.files.write(`${dir}/new.txt`, 'mine')
        await sandbox.files.write(`${dir}/sub/deeper/new.txt`, 'mine too')
        expect(await sandbox.files.read(`${dir}/new.txt`)).toBe('mine')
        expect(await sandbox.files.read(`${dir}/sub/deeper/new.txt`)).toBe('mine too')
        for (const entry of ['new.txt', 'sub', 'sub/deeper', 'sub/deeper/new.txt']) {
          expect(await ownerOf(sandbox, `${dir}/${entry}`)).toBe('user')
        }
        const mode = await sandbox.commands.run(`stat -c %a ${dir}/sub ${dir}/new.txt`)
        expect(mode.stdout).toBe('755\n644\n')
        // Overwriting is the user's own business: root's 0644 file is not the user's to write.
        const overwrite = sandbox.files.write(`${dir}/root.txt`, 'taken')
        await expect(overwrite).rejects.toThrow(
          `403: permission denied: cannot write '${dir}/root.txt'`,
        )
        expect(await sandbox.files.read(`${dir}/root.txt`)).toBe('kept\n')
        expect(await ownerOf(sandbox, `${dir}/root.txt`)).toBe('root')
        // No temporary upload file is left behind by either outcome.
        const listing = await sandbox.commands.run(`ls -A ${dir}`, { user: 'root' })
        expect(listing.stdout).toBe('new.txt\nroot.txt\nsub\n')
      } finally {
        await sandbox.commands.run(`rm -rf ${dir}`, { user: 'root' })
      }
    },
  )

  sandboxTest('makeDir at / gives every new directory to the user', async ({ sandbox }) => {
    const top = `/${uniqueName()}`
    try {
      expect(await sandbox.files.makeDir(`${top}/a/b`)).toBe(true)
      for (const dir of [top, `${top}/a`, `${top}/a/b`]) {
        expect(await sandbox.files.getInfo(dir)).toMatchObject({ type: 'dir', owner: 'user' })
      }
      expect(await sandbox.files.makeDir(`${top}/a/b`)).toBe(false)
    } finally {
      await sandbox.commands.run(`rm -rf ${top}`, { user: 'root' })
    }
  })

  sandboxTest(
    'a symlink to /root does not take root’s writes there',
    async ({ sandbox, testDir }) => {
      const tag = uniqueName('sbt-evil')
      await sandbox.commands.run(`ln -s /root ${testDir}/evil`)
      for (const target of [`evil/${tag}`, `evil/${tag}-sub/x`]) {
        const denied = sandbox.files.write(`${testDir}/${target}`, 'x')
        await expect(denied).rejects.toThrow(`403: permission denied: cannot write '${testDir}/`)
      }
      const madeDir = await sandbox.files
        .makeDir(`${testDir}/evil/${tag}-dir`)
        .catch((error: unknown) => error)
      expect(String(madeDir)).toMatch(/permission denied/)
      const landed = await sandbox.commands.run('ls -A /root', { user: 'root' })
      expect(landed.stdout).not.toMatch(new RegExp(`${tag}|\\.sandbar-upload-`))
    },
  )

  sandboxTest(
    'a temporary file swapped for a symlink mid-upload lends root no reach',
    async ({ sandbox, testDir }) => {
      const dir = `${testDir}/rootdir`
      const victim = `/root/${uniqueName('sbt-victim')}`
      await sandbox.commands.run(`mkdir -m 755 ${dir} && echo kept > ${victim}`, { user: 'root' })
      // The upload pauses after its first chunk: root has then made `sub` (the user's, as on
      // E2B) and the temporary file in it, still to receive the rest and the metadata.
      let resume = (): void => {}
      const resumed = new Promise<void>((resolve) => {
        resume = resolve
      })
      let chunks = 0
      const body = new ReadableStream<Uint8Array>({
        async pull(stream) {
          chunks += 1
          if (chunks === 2) await resumed
          stream.enqueue(new TextEncoder().encode(`chunk ${chunks}\n`))
          if (chunks === 2) stream.close()
        },
      })
      try {
        const write = sandbox.files
          .write(`${dir}/sub/x.txt`, body, { metadata: { planted: 'yes' } })
          .catch((error: unknown) => error)
        await expect
          .poll(async () => (await sandbox.commands.run(`ls -A ${dir}/sub || true`)).stdout)
          .toMatch(/^\.sandbar-upload-/)
        // As user, in the directory root gave it: the temporary name now points at root's file.
        const swap = `cd ${dir}/sub && for f in .sandbar-upload-*; do mv "$f" moved; ln -s ${victim} "$f"; done`
        await sandbox.commands.run(swap)
        resume()
        const outcome = await write
        expect(String(outcome)).not.toMatch(/500/)
        const info = await sandbox.files.getInfo(victim, { user: 'root' })
        expect(info).toMatchObject({ type: 'file', owner: 'root' })
        expect(info.metadata).toBeUndefined()
        expect(await sandbox.files.read(victim, { user: 'root' })).toBe('kept\n')
      } finally {
        resume()
        await sandbox.commands.run(`rm -f ${victim}`, { user: 'root' })
      }
    },
  )

  sandboxTest(
    'a symlink root planted where a parent would be created is not followed',
    async ({ sandbox }) => {
      const tag = uniqueName('sbt-link')
      const dir = `/${tag}`
      // Root-owned, so the user's own attempt is denied and only the root fallback could act.
      await sandbox.commands.run(`mkdir -m 755 ${dir} && ln -s /root ${dir}/link`, {
        user: 'root',
      })
      try {
        for (const target of [`${dir}/link/${tag}.txt`, `${dir}/link/${tag}-sub/x.txt`]) {
          const denied = sandbox.files.write(target, 'x')
          await expect(denied).rejects.toThrow(`403: permission denied: cannot write '${target}'`)
        }
        const madeDir = await sandbox.files
          .makeDir(`${dir}/link/${tag}-dir`)
          .catch((error: unknown) => error)
        expect(String(madeDir)).toMatch(/permission denied/)
        const landed = await sandbox.commands.run('ls -A /root', { user: 'root' })
        expect(landed.stdout).not.toMatch(new RegExp(`${tag}|\\.sandbar-upload-`))
        const listing = await sandbox.commands.run(`ls -A ${dir}`, { user: 'root' })
        expect(listing.stdout).toBe('link\n')
      } finally {
        await sandbox.commands.run(`rm -rf ${dir}`, { user: 'root' })
      }
    },
  )
})
