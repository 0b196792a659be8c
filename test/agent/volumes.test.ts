import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { access, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HostVolumes } from '../../src/agent/volumes/host-volumes.js'

// The agent's volumes on a real host: journaled sparse ext4 images, loop-mounted, kept while
// another mount namespace (a sandbox's) still holds one.

const run = promisify(execFile)
const logger = pino({ level: 'silent' })
let dataDir = ''
let volumes: HostVolumes

beforeAll(async () => {
  dataDir = await mkdtemp('/tmp/sbt-volumes-')
  volumes = new HostVolumes(path.join(dataDir, 'volumes'), logger)
  await volumes.open()
})

afterAll(async () => {
  for (const volumeID of await volumes.list()) await volumes.remove(volumeID)
  const mounts = await readFile('/proc/self/mountinfo', 'utf8')
  expect(mounts).not.toContain(dataDir)
  await rm(dataDir, { recursive: true, force: true })
})

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  )

/** A process in a mount namespace of its own, made while the volume was mounted. */
async function namespaceHolder(): Promise<ChildProcess> {
  const child = spawn('unshare', ['--mount', '--propagation', 'private', 'sleep', '60'], {
    stdio: 'ignore',
  })
  // Until unshare has made the namespace, the process is still in ours.
  const own = await readFile('/proc/self/mountinfo', 'utf8')
  for (let i = 0; i < 100; i++) {
    const theirs = await readFile(`/proc/${child.pid}/mountinfo`, 'utf8').catch(() => own)
    if (theirs !== own) break
    await sleep(20)
  }
  return child
}

describe('host volumes', () => {
  it('makes an empty, journaled, world-writable volume of its size, and reports its use', async () => {
    const volumeID = randomUUID()
    await volumes.create(volumeID, 32)
    const dir = volumes.directory(volumeID)
    const root = await stat(dir)
    expect({ mode: root.mode & 0o7777, uid: root.uid, gid: root.gid }).toEqual({
      mode: 0o777,
      uid: 0,
      gid: 0,
    })
    expect(await readdir(dir)).toEqual([])
    const { stdout } = await run('dumpe2fs', ['-h', `${dir}.img`])
    expect(stdout).toMatch(/Filesystem features:.*has_journal/)
    expect(stdout).toMatch(/Reserved block count:\s+0\n/)
    const mounts = await readFile('/proc/self/mountinfo', 'utf8')
    const line = mounts.split('\n').find((entry) => entry.includes(` ${dir} `)) ?? ''
    expect(line).toMatch(/nosuid,nodev,noatime/)
    expect(await volumes.usage(volumeID)).toMatchObject({ usedMB: expect.any(Number) })
    await writeFile(path.join(dir, 'data'), Buffer.alloc(8 * 1024 * 1024))
    expect((await volumes.usage(volumeID)).usedMB).toBeGreaterThanOrEqual(8)
    // The quota is the filesystem's size.
    await expect(writeFile(path.join(dir, 'more'), Buffer.alloc(32 * 1024 * 1024))).rejects.toThrow(
      /ENOSPC/,
    )
    expect(await volumes.remove(volumeID)).toBe(true)
    expect(await exists(dir)).toBe(false)
    expect(await exists(`${dir}.img`)).toBe(false)
  })

  it('mounts every volume again when it starts, as after a reboot', async () => {
    const volumeID = randomUUID()
    await volumes.create(volumeID, 16)
    const dir = volumes.directory(volumeID)
    await writeFile(path.join(dir, 'kept'), 'kept')
    await run('umount', [dir])
    const again = new HostVolumes(path.join(dataDir, 'volumes'), logger)
    await again.open()
    expect(await readFile(path.join(dir, 'kept'), 'utf8')).toBe('kept')
    // An unmounted volume is refused rather than written on the host's own disk.
    await run('umount', [dir])
    await expect(again.files(volumeID).stat('/')).rejects.toThrow(/is not mounted/)
    await expect(again.usage(volumeID)).rejects.toThrow(/is not mounted/)
    await again.open()
    expect(await again.remove(volumeID)).toBe(true)
  })

  it('keeps a volume whose filesystem another mount namespace holds, and removes it after', async () => {
    const volumeID = randomUUID()
    await volumes.create(volumeID, 16)
    const dir = volumes.directory(volumeID)
    await writeFile(path.join(dir, 'shared'), 'still here')
    const holder = await namespaceHolder()
    try {
      expect(await volumes.remove(volumeID)).toBe(false)
      // This host's mount went; the image, and the holder's view of it, stay.
      expect(await readFile('/proc/self/mountinfo', 'utf8')).not.toContain(` ${dir} `)
      expect(await exists(`${dir}.img`)).toBe(true)
      const theirs = await readFile(`/proc/${holder.pid}/root${dir}/shared`, 'utf8')
      expect(theirs).toBe('still here')
    } finally {
      holder.kill('SIGKILL')
      await once(holder, 'exit')
    }
    expect(await volumes.remove(volumeID)).toBe(true)
    expect(await exists(`${dir}.img`)).toBe(false)
  })
})
