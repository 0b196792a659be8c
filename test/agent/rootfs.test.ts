import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import {
  chown,
  copyFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  statfs,
  writeFile,
} from 'node:fs/promises'
import path from 'node:path'
import { pino } from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { runHostCommand } from '../../src/agent/host-command.js'
import { BlankDisks } from '../../src/agent/rootfs/blank-disks.js'
import {
  loopDevicesOf,
  makeDiskImage,
  mountDiskImage,
  mountImage,
  removeDiskImage,
} from '../../src/agent/rootfs/disk-image.js'
import { detachStages, IDMAPPED_MOUNT_HELPER } from '../../src/agent/rootfs/idmapped-mount.js'
import { mountIdmappedOverlay } from '../../src/agent/rootfs/idmapped-overlay.js'
import { isMounted } from '../../src/agent/rootfs/mount-calls.js'
import { mountsUnder, readMounts } from '../../src/agent/rootfs/mountinfo.js'
import type { Toolbox } from '../../src/agent/rootfs/rootfs.js'
import { ensureToolbox } from '../../src/agent/rootfs/toolbox.js'
import { unmountAll } from '../../src/agent/rootfs/unmount.js'
import {
  createUserNamespace,
  OWNER_BASE,
  USER_NAMESPACE_HELPER,
  unpinNamespace,
} from '../../src/agent/user-namespace.js'
import { ensureTestBaseLayer, testLayerStore } from './base-layer.js'
import { TEST_ID_MAP } from './runtime-fixture.js'

const logger = pino({ level: process.env.SANDBAR_LOG_LEVEL ?? 'silent' })

// Everything this file makes lives under one `sbt-` directory, removed in afterAll. The base
// layer is the exception: it goes to TEMPLATE_CACHE (/var/cache/sandbar-test), a cache keyed
// by recipe hash that later runs reuse, so it is deliberately never deleted (not a leak).
let scratch = ''

beforeAll(async () => {
  scratch = await mkdtemp(`/tmp/sbt-rootfs-${randomBytes(3).toString('hex')}-`)
})

afterEach(async () => {
  // A failed test may leave an overlay or bind mount: take it down before the next one.
  for (const point of (await mountsUnder(scratch)).reverse()) await unmountAll(point)
})

afterAll(async () => {
  if (scratch === '') return
  expect(await mountsUnder(scratch)).toEqual([])
  await rm(scratch, { recursive: true, force: true })
})

describe('base template', () => {
  let layerID = ''
  const progress: string[] = []

  beforeAll(async () => {
    const started = performance.now()
    layerID = await ensureTestBaseLayer(logger, (line) => progress.push(line))
    console.log(`base layer ready in ${Math.round(performance.now() - started)} ms`)
  })

  const layer = (file: string): string => path.join(testLayerStore(logger).path(layerID), file)

  it('is one cached layer named by its recipe, reused by the next call', async () => {
    expect(layerID).toMatch(/^base-[0-9a-f]{16}$/)
    const started = performance.now()
    expect(await ensureTestBaseLayer(logger)).toBe(layerID)
    expect(performance.now() - started).toBeLessThan(1000)
    const names = await readdir(path.dirname(layer('')))
    expect(names.filter((name) => name.startsWith('.adding-'))).toEqual([])
  })

  it('has user `user` (uid 1000) with passwordless sudo, stored with the image IDs where only root enters', async () => {
    const passwd = await readFile(layer('etc/passwd'), 'utf8')
    expect(passwd).toContain('user:x:1000:1000::/home/user:/bin/bash\n')
    expect(await readFile(layer('etc/group'), 'utf8')).toMatch(/^sudo:x:27:user$/m)
    const home = await stat(layer('home/user'))
    expect([home.uid, home.gid]).toEqual([1000, 1000])
    const root = await stat(layer(''))
    expect([root.uid, root.gid, root.mode & 0o7777]).toEqual([0, 0, 0o755])
    const layers = await stat(path.dirname(layer('')))
    expect([layers.uid, layers.gid, layers.mode & 0o7777]).toEqual([0, 0, 0o700])
    const sudoers = await stat(layer('etc/sudoers.d/user'))
    expect(sudoers.mode & 0o7777).toBe(0o440)
    expect(await readFile(layer('etc/sudoers.d/user'), 'utf8')).toBe(
      'user ALL=(ALL:ALL) NOPASSWD: ALL\n',
    )
  })

  it('keeps setuid bits', async () => {
    const sudo = await stat(layer('usr/bin/sudo'))
    expect([sudo.uid, sudo.mode & 0o7777]).toEqual([0, 0o4755])
  })

  it('holds python3, pip, node, npm, git, curl, sudo, ps and ip', async () => {
    for (const tool of ['python3', 'pip3', 'node', 'npm', 'git', 'curl', 'sudo', 'ps']) {
      expect((await stat(layer(`usr/bin/${tool}`))).isFile(), tool).toBe(true)
    }
    expect((await stat(layer('usr/sbin/ip'))).isFile()).toBe(true)
  })

  it('has its own resolv.conf, hosts and hostname, and no apt caches', async () => {
    expect(await readFile(layer('etc/resolv.conf'), 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m)
    expect(await readFile(layer('etc/hosts'), 'utf8')).toMatch(/^127\.0\.0\.1\tlocalhost$/m)
    expect(await readFile(layer('etc/hostname'), 'utf8')).toBe('sandbox\n')
    const lists = await readdir(layer('var/lib/apt/lists'))
    expect(lists.filter((name) => name !== 'lock' && name !== 'partial')).toEqual([])
    expect(await readdir(layer('var/cache/apt/archives'))).not.toContainEqual(
      expect.stringMatching(/\.deb$/),
    )
  })

  it("mounts idmapped as a sandbox's overlay: the sandbox's IDs own its files, writes land in upper, the layers stay as they were", async () => {
    const top = path.join(scratch, 'layer-top')
    await mkdir(path.join(top, 'etc'), { recursive: true })
    await writeFile(path.join(top, 'etc/hostname'), 'from-top\n')
    const userNamespace = path.join(scratch, 'userns')
    const idMap = TEST_ID_MAP
    await createUserNamespace({
      helper: path.join(inject('envdBuildDir'), USER_NAMESPACE_HELPER),
      file: userNamespace,
      owner: OWNER_BASE + 1,
      idMap,
    })
    const paths = {
      upper: path.join(scratch, 'upper'),
      work: path.join(scratch, 'work'),
      target: path.join(scratch, 'rootfs'),
    }
    for (const dir of Object.values(paths)) await mkdir(dir)
    await chown(paths.upper, idMap.hostID, idMap.hostID)
    await chown(paths.work, idMap.hostID, idMap.hostID)
    const stageDir = path.join(scratch, 'stage')
    try {
      const started = performance.now()
      await mountIdmappedOverlay({
        helper: path.join(inject('envdBuildDir'), IDMAPPED_MOUNT_HELPER),
        userNamespace,
        lower: [layer(''), top],
        ...paths,
        stageDir,
      })
      const mountMillis = performance.now() - started
      expect(await isMounted(paths.target)).toBe(true)
      expect(await mountsUnder(stageDir)).toEqual([])
      const owner = async (file: string) => {
        const stats = await stat(path.join(paths.target, file))
        return [stats.uid - idMap.hostID, stats.gid - idMap.hostID]
      }
      expect(await owner('')).toEqual([0, 0])
      expect(await owner('home/user')).toEqual([1000, 1000])
      expect(await owner('etc/passwd')).toEqual([0, 0])
      expect(await readFile(path.join(paths.target, 'etc/hostname'), 'utf8')).toBe('from-top\n')
      await writeFile(path.join(paths.target, 'etc/sbt-written'), 'written in the sandbox\n')
      await writeFile(path.join(paths.target, 'etc/passwd'), 'replaced\n')
      expect(await readFile(path.join(paths.upper, 'etc/sbt-written'), 'utf8')).toBe(
        'written in the sandbox\n',
      )
      const copied = await stat(path.join(paths.upper, 'etc/passwd'))
      expect([copied.uid, copied.gid]).toEqual([idMap.hostID, idMap.hostID])
      expect(await stat(layer('etc/sbt-written')).catch(() => undefined)).toBeUndefined()
      expect(await readFile(layer('etc/passwd'), 'utf8')).toMatch(/^root:x:0:0:/)
      const unmountStarted = performance.now()
      await unmountAll(paths.target)
      const unmountMillis = performance.now() - unmountStarted
      await unmountAll(paths.target)
      expect(await isMounted(paths.target)).toBe(false)
      console.log(
        `idmapped overlay mount ${mountMillis.toFixed(1)} ms, unmount ${unmountMillis.toFixed(1)} ms`,
      )
    } finally {
      await unmountAll(paths.target)
      await detachStages(stageDir)
      await unpinNamespace(userNamespace)
    }
    expect(await mountsUnder(scratch)).toEqual([])
  })
})

describe('toolbox', () => {
  let toolbox: Toolbox

  beforeAll(async () => {
    toolbox = await ensureToolbox({
      dataDir: path.join(scratch, 'data'),
      envdBuildDir: inject('envdBuildDir'),
      shareEnvdMemory: false,
      logger,
    })
  })

  /** Runs argv inside a chroot of a busybox-only rootfs (no glibc) with the toolbox bound in. */
  async function inBusyboxChroot(args: string[]): Promise<string> {
    const root = await mkdtemp(path.join(scratch, 'busybox-'))
    await mkdir(path.join(root, 'bin'))
    await mkdir(path.join(root, '.sandbar'))
    await copyFile('/bin/busybox', path.join(root, 'bin/busybox'))
    expect(await stat(path.join(root, 'lib')).catch(() => undefined)).toBeUndefined()
    // A private mount namespace: the bind mount dies with the command, even if the test fails.
    const script = 'mount --bind -o ro "$1" "$2/.sandbar" && shift 2 && exec chroot "$@"'
    return runHostCommand('unshare', [
      ...['-m', '--propagation', 'private', 'sh', '-c', script, 'sh'],
      ...[toolbox.dir, root, root],
      ...args,
    ])
  }

  const viaLoader = ['/.sandbar/lib/ld-linux-x86-64.so.2', '--library-path', '/.sandbar/lib']

  it('runs node through its own loader in a rootfs without glibc, addons and all', async () => {
    const script = "require('/.sandbar/envd/build/Release/pty.node'); console.log(process.version)"
    const output = await inBusyboxChroot([...viaLoader, '/.sandbar/bin/node', '-e', script])
    expect(output.trim()).toBe(process.version)
  })

  it("runs envd's run-as and tini on their own", async () => {
    // Static: it needs no loader or libc in a rootfs without glibc (the busybox there is
    // the scratch dir's, which only root may enter).
    const runAs = ['/.sandbar/envd/run-as', '0', '0', '1500', '--']
    expect(await inBusyboxChroot([...runAs, '/bin/busybox', 'id', '-G'])).toBe('0 1500\n')
    expect(await inBusyboxChroot(['/.sandbar/bin/tini', '--version'])).toMatch(/tini version/)
  })

  it("is readable by every sandbox's IDs and reused while its inputs stay the same", async () => {
    const node = await stat(path.join(toolbox.dir, 'bin/node'))
    expect(node.mode & 0o777).toBe(0o755)
    expect((await stat(toolbox.dir)).mode & 0o777).toBe(0o755)
    const again = await ensureToolbox({
      dataDir: path.join(scratch, 'data'),
      envdBuildDir: inject('envdBuildDir'),
      shareEnvdMemory: false,
      logger,
    })
    expect(again.dir).toBe(toolbox.dir)
  })
})

describe('isMounted and unmountAll', () => {
  it('see a mount at its root only, a bind of the same filesystem too, and unmount stacked mounts to the last', async () => {
    const source = path.join(scratch, 'bind-source')
    const target = path.join(scratch, 'bind-target')
    await mkdir(path.join(source, 'inner'), { recursive: true })
    await mkdir(target)
    expect(await isMounted(target)).toBe(false)
    expect(await isMounted(path.join(scratch, 'not-there'))).toBe(false)
    // A bind mount keeps the device of the directory below it: only the kernel's mount table knows.
    await runHostCommand('mount', ['--bind', source, target])
    await runHostCommand('mount', ['-t', 'tmpfs', 'tmpfs', target])
    try {
      expect(await isMounted(target)).toBe(true)
      expect(await isMounted(source)).toBe(false)
      await runHostCommand('umount', [target])
      expect(await isMounted(target)).toBe(true)
      expect(await isMounted(path.join(target, 'inner'))).toBe(false)
      await runHostCommand('mount', ['-t', 'tmpfs', 'tmpfs', target])
    } finally {
      await unmountAll(target)
    }
    expect(await isMounted(target)).toBe(false)
    expect(await readdir(target)).toEqual([])
    // Nothing mounted, or nothing there at all, is already done.
    await unmountAll(target)
    await unmountAll(path.join(scratch, 'not-there'))
  })
})

describe("a sandbox's disk image", () => {
  it('mounts on a loop device of its own, nodev, nosuid and noatime, which goes with the unmount', async () => {
    const image = path.join(scratch, 'disk.img')
    const mountPoint = path.join(scratch, 'disk')
    await mkdir(mountPoint)
    await makeDiskImage(image, 16)
    await mountImage(image, mountPoint, { fresh: true })
    try {
      const [device] = loopDevicesOf(image)
      expect(device).toMatch(/^\/dev\/loop\d+$/)
      const mounted = (await readMounts()).find((entry) => entry.mountPoint === mountPoint)
      expect(mounted).toMatchObject({
        mountOptions: 'rw,nosuid,nodev,noatime',
        fsType: 'ext4',
        source: device,
        superOptions: 'rw',
      })
      await writeFile(path.join(mountPoint, 'kept'), 'on the image')
      // Mounted again elsewhere, the image keeps its one device: two would be two filesystems.
      const second = path.join(scratch, 'disk-again')
      await mkdir(second)
      await mountImage(image, second)
      expect(loopDevicesOf(image)).toEqual([device])
      expect(await readFile(path.join(second, 'kept'), 'utf8')).toBe('on the image')
      await unmountAll(second)
    } finally {
      await unmountAll(mountPoint)
    }
    // Autoclear: the device detaches once its filesystem is unmounted.
    await expect.poll(() => loopDevicesOf(image), { timeout: 2_000 }).toEqual([])
    await removeDiskImage({ image, mountPoint })
  })

  it('gives images mounted at once a loop device each', async () => {
    // Attachers at once are told the same free device until the first one has it (mount-calls.c).
    const disks = Array.from({ length: 6 }, (_, index) => ({
      image: path.join(scratch, `at-once-${index}.img`),
      mountPoint: path.join(scratch, `at-once-${index}`),
    }))
    for (const { image, mountPoint } of disks) {
      await mkdir(mountPoint)
      await makeDiskImage(image, 16)
    }
    try {
      await Promise.all(
        disks.map((disk) => mountImage(disk.image, disk.mountPoint, { fresh: true })),
      )
      const devices = disks.map(({ image }) => loopDevicesOf(image))
      expect(devices.every((attached) => attached.length === 1)).toBe(true)
      expect(new Set(devices.flat()).size).toBe(disks.length)
    } finally {
      for (const disk of disks) await removeDiskImage(disk)
    }
  })

  it('leaves no loop device attached when the image holds no filesystem, and names the failure', async () => {
    const image = path.join(scratch, 'not-ext4.img')
    const mountPoint = path.join(scratch, 'not-ext4')
    await mkdir(mountPoint)
    await writeFile(image, Buffer.alloc(1 << 20))
    await expect(mountImage(image, mountPoint, { fresh: true })).rejects.toMatchObject({
      code: 'EINVAL',
      message: `mount (${image} on ${mountPoint}): Invalid argument`,
    })
    expect(loopDevicesOf(image)).toEqual([])
    expect(await isMounted(mountPoint)).toBe(false)
    const missing = path.join(scratch, 'no-such.img')
    await expect(mountImage(missing, mountPoint, { fresh: true })).rejects.toMatchObject({
      code: 'ENOENT',
      message: `open (${missing} on ${mountPoint}): No such file or directory`,
    })
  })
})

describe('blank disks', () => {
  it("copy their size's blank, made once, into a sparse disk of the sandbox's own", async () => {
    const blanks = new BlankDisks(path.join(scratch, 'blanks'))
    await blanks.open()
    const disks = ['first', 'second'].map((name) => ({
      image: path.join(scratch, `${name}.img`),
      mountPoint: path.join(scratch, name),
      sizeMB: 64,
    }))
    try {
      for (const disk of disks) {
        await mkdir(disk.mountPoint)
        await mountDiskImage(disk, blanks)
      }
      const [first, second] = disks.map(({ mountPoint }) => mountPoint) as [string, string]
      await writeFile(path.join(first, 'only-here'), 'first')
      expect(await readdir(second)).toEqual(['lost+found'])
      const { blocks, bsize } = await statfs(second)
      expect(blocks * bsize).toBeGreaterThan(60 * 2 ** 20)
      // One blank for the size, made by the first copy.
      expect(await readdir(blanks.dir)).toEqual([expect.stringMatching(/^64M-[0-9a-f]{16}\.img$/)])
      for (const { image } of disks) {
        const { size, blocks } = await stat(image)
        expect(size).toBe(64 * 2 ** 20)
        expect(blocks * 512).toBeLessThan(2 ** 20)
      }
      // A disk that is there is never overwritten.
      await expect(blanks.copy(path.join(scratch, 'first.img'), 64)).rejects.toThrow('EEXIST')
      expect(await readFile(path.join(first, 'only-here'), 'utf8')).toBe('first')
    } finally {
      for (const disk of disks) await removeDiskImage(disk)
    }
  })

  it('go at open when made with other settings or left half-made', async () => {
    const dir = path.join(scratch, 'blanks-stale')
    const blanks = new BlankDisks(dir)
    await blanks.open()
    const image = path.join(scratch, 'from-stale.img')
    await blanks.copy(image, 32)
    await rm(image)
    const [current] = await readdir(dir)
    await writeFile(path.join(dir, '32M-0123456789abcdef.img'), 'made with other settings')
    await writeFile(path.join(dir, `.${current}.12345`), 'an interrupted mkfs')
    await new BlankDisks(dir).open()
    expect(await readdir(dir)).toEqual([current])
    expect((await stat(dir)).mode & 0o777).toBe(0o700)
  })
})

describe('unmounting', () => {
  it('waits out a mount kept busy by a process that is still exiting', async () => {
    const target = path.join(scratch, 'busy')
    await mkdir(target)
    await runHostCommand('mount', ['-t', 'tmpfs', 'tmpfs', target])
    // As a killed sandbox's last process does for a moment: its working directory is there.
    const holder = spawn('sleep', ['0.5'], { cwd: target, stdio: 'ignore' })
    await once(holder, 'spawn')
    await unmountAll(target)
    expect(holder.exitCode).toBe(0)
    expect(await isMounted(target)).toBe(false)
  })
})
