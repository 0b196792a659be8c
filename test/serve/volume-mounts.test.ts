import { existsSync } from 'node:fs'
import path from 'node:path'
import { Sandbox, SandboxError, Volume } from 'e2b'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ServeInstance, startServe } from './serve-fixture.js'

// Volumes mounted into sandboxes (issue 15, wave2-contracts §2.4), through the SDK as a user
// would: `Sandbox.create({ volumeMounts })`, the sandbox's own commands, and the volume's
// content API, which shares the same bytes.

let serve: ServeInstance
const opts = () => ({ ...serve.client })

beforeAll(async () => {
  serve = await startServe()
  // What a user who sources client.env has: the content API is the API's own address.
  process.env.E2B_VOLUME_API_URL = serve.client.apiUrl
})

afterAll(async () => {
  delete process.env.E2B_VOLUME_API_URL
  const leaks = await serve?.stop()
  expect(leaks).toEqual([])
})

const unique = (stem: string) => `${stem}-${Math.random().toString(36).slice(2, 8)}`

describe('volume mounts', () => {
  it('shares one volume live between two sandboxes and the content API', async () => {
    const volume = await Volume.create(unique('shared'), opts())
    const first = await Sandbox.create({ ...opts(), volumeMounts: { '/data': volume } })
    const second = await Sandbox.create({ ...opts(), volumeMounts: { '/mnt/shared': volume.name } })
    try {
      await first.commands.run('echo from-first > /data/note.txt')
      const seen = await second.commands.run(
        'cat /mnt/shared/note.txt; stat -c %U /mnt/shared/note.txt',
      )
      expect(seen.stdout).toBe('from-first\nuser\n')
      expect(await volume.readFile('/note.txt')).toBe('from-first\n')

      await volume.writeFile('/from-api.txt', 'from-api')
      expect((await second.commands.run('cat /mnt/shared/from-api.txt')).stdout).toBe('from-api')
      // The content API's default mode lets the sandbox's user change what it wrote.
      await first.commands.run('echo changed > /data/from-api.txt')
      expect(await volume.readFile('/from-api.txt')).toBe('changed\n')

      expect((await first.getInfo()).volumeMounts).toEqual([{ name: volume.name, path: '/data' }])
      const listed = await Sandbox.list(opts()).nextItems()
      expect(listed.find((info) => info.sandboxId === second.sandboxId)?.volumeMounts).toEqual([
        { name: volume.name, path: '/mnt/shared' },
      ])
    } finally {
      await first.kill()
      await second.kill()
      await Volume.destroy(volume.volumeId, opts())
    }
  })

  it('refuses bad mounts with every reason at once, and starts nothing', async () => {
    const volume = await Volume.create(unique('checked'), opts())
    try {
      const refused = Sandbox.create({
        ...opts(),
        volumeMounts: { '/data': 'no-such-volume', 'relative/path': volume, '/a/../b': volume },
      })
      await expect(refused).rejects.toThrow(SandboxError)
      await expect(refused).rejects.toThrow(
        [
          '400: invalid mounts:',
          "\t- volume mount #0: volume 'no-such-volume' not found",
          '\t- volume mount #1: path must be absolute',
          "\t- volume mount #2: path must not contain any '.' or '..' components",
        ].join('\n'),
      )
      expect(await Sandbox.list(opts()).nextItems()).toEqual([])
    } finally {
      await Volume.destroy(volume.volumeId, opts())
    }
  })

  it('keeps what the sandbox wrote inside the volume, whatever it links to', async () => {
    const volume = await Volume.create(unique('guarded'), opts())
    const sandbox = await Sandbox.create({ ...opts(), volumeMounts: { '/data': volume } })
    try {
      const attempts = await sandbox.commands.run(
        [
          'ln -s /etc/shadow /data/shadow',
          'ln -s / /data/root',
          'ln /etc/hostname /data/hard 2>/dev/null || echo hard link refused',
          'sudo mknod /data/disk b 8 0 2>/dev/null || echo mknod refused',
        ].join('; '),
      )
      expect(attempts.stdout).toBe('hard link refused\nmknod refused\n')
      // The content API runs on the host: it must not follow the sandbox's links out of the volume.
      await expect(volume.readFile('/shadow')).rejects.toThrow()
      await expect(volume.writeFile('/root/tmp/planted', 'x')).rejects.toThrow()
      await expect(volume.remove('/root/etc')).rejects.toThrow()
      const entries = await volume.list('/')
      expect(entries.find((entry) => entry.name === 'shadow')).toMatchObject({
        type: 'symlink',
        target: '/etc/shadow',
      })
    } finally {
      await sandbox.kill()
      await Volume.destroy(volume.volumeId, opts())
    }
  })

  it('outlives its sandboxes and a restart of the service', async () => {
    const volume = await Volume.create(unique('kept'), opts())
    const writer = await Sandbox.create({ ...opts(), volumeMounts: { '/data': volume } })
    await writer.commands.run('mkdir -p /data/results && echo 42 > /data/results/answer')
    await writer.kill()
    await serve.crashAndRestart()
    const connected = await Volume.connect(volume.volumeId, opts())
    expect(await connected.readFile('/results/answer')).toBe('42\n')
    const reader = await Sandbox.create({ ...opts(), volumeMounts: { '/data': volume } })
    try {
      expect((await reader.commands.run('cat /data/results/answer')).stdout).toBe('42\n')
    } finally {
      await reader.kill()
      await Volume.destroy(volume.volumeId, opts())
    }
  })

  it('keeps a deleted volume for the sandbox that mounts it, and removes it after', async () => {
    const volume = await Volume.create(unique('doomed'), opts())
    const image = path.join(serve.dataDir, 'volumes', `${volume.volumeId}.img`)
    const sandbox = await Sandbox.create({ ...opts(), volumeMounts: { '/data': volume } })
    try {
      await sandbox.commands.run('echo before > /data/file')
      expect(await Volume.destroy(volume.volumeId, opts())).toBe(true)
      // Gone for clients at once, its name free; the sandbox keeps what it mounted.
      expect((await Volume.list(opts())).map((listed) => listed.volumeId)).not.toContain(
        volume.volumeId,
      )
      const again = await Volume.create(volume.name, opts())
      await Volume.destroy(again.volumeId, opts())
      const still = await sandbox.commands.run(
        'cat /data/file; echo after > /data/file; cat /data/file',
      )
      expect(still.stdout).toBe('before\nafter\n')
      expect(existsSync(image)).toBe(true)
    } finally {
      await sandbox.kill()
    }
    await expect.poll(() => existsSync(image), { timeout: 15_000 }).toBe(false)
  })
})
