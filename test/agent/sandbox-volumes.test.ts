import { randomBytes } from 'node:crypto'
import { chmod, chown, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { CommandExitError, FileNotFoundError } from 'e2b'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { runHostCommand } from '../../src/agent/host-command.js'
import { type SandboxInfo, VolumeMountError } from '../../src/agent/index.js'
import { detachStages, IDMAPPED_MOUNT_HELPER } from '../../src/agent/rootfs/idmapped-mount.js'
import { mountsUnder } from '../../src/agent/rootfs/mountinfo.js'
import { stageVolumeMounts } from '../../src/agent/volumes/volume-stage.js'
import { sandboxForEnvd } from '../support/sdk-sandbox.js'
import {
  hostLeaks,
  readRecord,
  sandboxRequest,
  saveHalfMadeRecord,
  startTestAgent,
  type TestAgent,
} from './agent-fixture.js'
import { mountTestVolume, removeTestVolume } from './volume-fixture.js'

// Issue 15: a volume's host directory mounted into sandboxes, idmapped through each sandbox's
// user namespace, shared live, nodev and nosuid, with nothing a sandbox does through it
// reaching outside it. The volume is what the volume store makes: an ext4 image mounted
// loop,nodev,nosuid, its root 0777 and 0:0, files carrying the sandboxes' own IDs.

let test: TestAgent
/** Holds the volume's image and mount point, and a file beside them no sandbox may read. */
let scratch = ''
let volume = ''
/** Two sandboxes with the volume at /data, one with it at /mnt/volume. */
let a: SandboxInfo
let b: SandboxInfo
let c: SandboxInfo

const atData = () => sandboxRequest({ volumeMounts: [{ path: '/data', hostDir: volume }] })

beforeAll(async () => {
  scratch = await mkdtemp('/tmp/sbt-volume-')
  // Readable by anyone: only path resolution keeps a sandbox from the secret beside the volume.
  await chmod(scratch, 0o755)
  await writeFile(path.join(scratch, 'secret'), 'host only\n', { mode: 0o644 })
  volume = await mountTestVolume(scratch, 'volume')
  // Shared, as systemd makes every mount: what the host mounts below must still not propagate.
  await runHostCommand('mount', ['--make-shared', volume])
  test = await startTestAgent()
  a = await test.agent.create(atData())
  b = await test.agent.create(atData())
  c = await test.agent.create(
    sandboxRequest({ volumeMounts: [{ path: '/mnt/volume', hostDir: volume }] }),
  )
})

afterAll(async () => {
  let leaks: string[] | undefined
  try {
    leaks = await test?.dispose()
  } finally {
    if (scratch !== '') {
      // The volumes and the file systems the tests mount, innermost first.
      for (const point of (await mountsUnder(scratch)).reverse()) {
        await runHostCommand('umount', [point])
      }
      await rm(scratch, { recursive: true, force: true })
    }
  }
  expect(leaks).toEqual([])
})

/** A command's stdout, as `user` unless said otherwise. */
async function run(info: SandboxInfo, command: string, user = 'user'): Promise<string> {
  return (await sandboxForEnvd(info.envdURL).commands.run(command, { user })).stdout
}

/** The stderr of a command that must fail. */
async function refusal(info: SandboxInfo, command: string, user = 'user'): Promise<string> {
  try {
    await sandboxForEnvd(info.envdURL).commands.run(command, { user })
  } catch (error) {
    if (error instanceof CommandExitError) return error.stderr
    throw error
  }
  throw new Error(`'${command}' succeeded`)
}

async function hostOwner(file: string): Promise<string> {
  const stats = await stat(path.join(volume, file))
  return `${stats.uid}:${stats.gid}`
}

/** Mount points in the agent's mount table under one sandbox's directory, or its `sub`. */
function sandboxMounts(info: SandboxInfo, sub = ''): Promise<string[]> {
  return mountsUnder(path.join(test.config.dataDir, 'sandboxes', info.sandboxID, sub))
}

describe('a volume mounted in sandboxes', () => {
  it('shows a write in one to the others at once, owned by user, and to the host as 1000', async () => {
    await run(a, 'echo from-a > /data/note')
    expect(await run(b, 'cat /data/note; stat -c "%U:%G %a" /data/note')).toBe(
      'from-a\nuser:user 644\n',
    )
    expect(await run(c, 'cat /mnt/volume/note; stat -c %U:%G /mnt/volume/note')).toBe(
      'from-a\nuser:user\n',
    )
    expect(await hostOwner('note')).toBe('1000:1000')
    await run(b, 'echo from-b >> /data/note')
    expect(await run(a, 'cat /data/note')).toBe('from-a\nfrom-b\n')
    await sandboxForEnvd(c.envdURL).files.write('/mnt/volume/by-envd', 'through envd')
    expect((await sandboxForEnvd(a.envdURL).files.getInfo('/data/by-envd')).owner).toBe('user')
    await run(a, 'echo root > /data/by-root', 'root')
    expect(await hostOwner('by-root')).toBe('0:0')
    expect(await run(b, 'stat -c %U:%G /data/by-root')).toBe('root:root\n')
  })

  it('lets user read and write what the host wrote as 9090, 0666, in a 0777 directory', async () => {
    const dir = path.join(volume, 'api')
    await mkdir(dir)
    await chmod(dir, 0o777)
    await chown(dir, 9090, 9090)
    await writeFile(path.join(dir, 'content.txt'), 'from the content API\n')
    await chmod(path.join(dir, 'content.txt'), 0o666)
    await chown(path.join(dir, 'content.txt'), 9090, 9090)
    const script = [
      'cat /data/api/content.txt',
      'echo appended >> /data/api/content.txt',
      'stat -c "%u:%g %a" /data/api/content.txt',
      'touch /data/api/new',
    ].join(' && ')
    expect(await run(a, script)).toBe('from the content API\n9090:9090 666\n')
    expect(await readFile(path.join(dir, 'content.txt'), 'utf8')).toBe(
      'from the content API\nappended\n',
    )
    expect(await hostOwner('api/new')).toBe('1000:1000')
  })

  it('is read-write, nosuid, nodev, idmapped and private, with no stage left on the host', async () => {
    // No optional fields (shared:N, master:N) between the options and the separator.
    const line = await run(a, 'awk \'$5 == "/data"\' /proc/self/mountinfo')
    expect(line).toMatch(/ \/data rw,nosuid,nodev,\S*idmapped - ext4 /)
    for (const info of [a, b, c]) expect(await sandboxMounts(info, 'volumes')).toEqual([])
    const below = path.join(volume, 'host-mount')
    await mkdir(below)
    await runHostCommand('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', below])
    try {
      await writeFile(path.join(below, 'host-only'), '')
      expect(await run(a, 'ls -A /data/host-mount')).toBe('')
    } finally {
      await runHostCommand('umount', [below])
    }
  })
})

describe('a sandbox reaching outside its volume', () => {
  it("finds the volume's symlinks resolved in its own root, never the host's", async () => {
    await run(a, 'echo a > /home/user/whoami')
    await run(b, 'echo b > /home/user/whoami')
    const links = [
      'ln -s /home/user/whoami /data/whoami',
      'ln -s ../secret /data/up',
      `ln -s ${scratch}/secret /data/host`,
      'ln -s / /data/root',
    ]
    await run(a, links.join(' && '))
    // On the host, `up` is the secret beside the volume: what a sandbox must never reach.
    expect(await readFile(path.join(volume, 'up'), 'utf8')).toBe('host only\n')
    expect(await run(b, 'cat /data/whoami /data/root/home/user/whoami')).toBe('b\nb\n')
    expect(await refusal(b, 'cat /data/up')).toContain('No such file or directory')
    expect(await refusal(b, 'cat /data/host')).toContain('No such file or directory')
    const files = sandboxForEnvd(b.envdURL).files
    await expect(files.read('/data/up')).rejects.toBeInstanceOf(FileNotFoundError)
    await expect(files.read('/data/host')).rejects.toBeInstanceOf(FileNotFoundError)
  })

  it("stays in the sandbox at '..' of the volume's root", async () => {
    expect(await run(b, 'cd /data/.. && pwd -P && [ "$(stat -c %i .)" = "$(stat -c %i /)" ]')).toBe(
      '/\n',
    )
    expect(await run(b, 'realpath /data/../../..')).toBe('/\n')
    const parent = (await run(b, 'ls -A /data/..')).split('\n')
    expect(parent).toEqual(expect.arrayContaining(['data', 'etc', 'home']))
    expect(parent).not.toContain('secret')
    expect(parent).not.toContain('volume.img')
  })

  it('makes no hard link between the volume and the rest of the sandbox', async () => {
    expect(await refusal(a, 'ln /etc/passwd /data/passwd', 'root')).toContain(
      'Invalid cross-device link',
    )
    expect(await refusal(a, 'ln /data/note /home/user/note')).toContain('Invalid cross-device link')
  })

  it('makes no device, and cannot use a device node found there (nodev)', async () => {
    expect(await refusal(a, 'mknod /data/null c 1 3', 'root')).toContain('Operation not permitted')
    // What a careless host-side writer could leave: the volume's own block device, and zero.
    const device = (await runHostCommand('findmnt', ['-no', 'SOURCE', volume])).trim()
    const [major = '', minor = ''] = (await runHostCommand('stat', ['-c', '%Hr %Lr', device]))
      .trim()
      .split(' ')
    await runHostCommand('mknod', ['-m', '666', path.join(volume, 'disk'), 'b', major, minor])
    await runHostCommand('mknod', ['-m', '666', path.join(volume, 'zero'), 'c', '1', '5'])
    try {
      for (const node of ['disk', 'zero']) {
        expect(await refusal(b, `head -c 512 /data/${node} > /dev/null`, 'root')).toContain(
          'Permission denied',
        )
      }
    } finally {
      await rm(path.join(volume, 'disk'))
      await rm(path.join(volume, 'zero'))
    }
  })

  it("runs a setuid program another sandbox's root planted there as its caller (nosuid)", async () => {
    await run(a, 'cp /usr/bin/id /data/id-setuid && chmod 4755 /data/id-setuid', 'root')
    expect(await run(b, 'stat -c "%U %a" /data/id-setuid && /data/id-setuid -u')).toBe(
      'root 4755\n1000\n',
    )
    // The same program off the volume does elevate: the mount's nosuid is what holds.
    await run(
      b,
      'cp /usr/bin/id /usr/local/bin/id-setuid && chmod 4755 /usr/local/bin/id-setuid',
      'root',
    )
    expect(await run(b, '/usr/local/bin/id-setuid -u')).toBe('0\n')
  })

  it('cannot unmount, remount or cover it, even as root', async () => {
    for (const command of [
      'umount /data',
      'umount -l /data',
      'mount -o remount,suid,dev /data',
      'mount --bind /tmp /data',
      'mount --bind /data/.. /mnt',
      'unshare -m umount /data',
      'unshare -Urm umount /data',
    ]) {
      await expect(refusal(a, command, 'root'), command).resolves.not.toBe('')
    }
    expect(await run(a, 'awk \'$5 == "/data" {print $5}\' /proc/self/mountinfo')).toBe('/data\n')
    expect(await run(a, 'cat /data/note')).toBe('from-a\nfrom-b\n')
  })
})

describe('pause and resume', () => {
  it('keep the mount: what others wrote meanwhile is there, and writes are live again', async () => {
    await test.agent.pause(a.sandboxID)
    await writeFile(path.join(volume, 'while-paused'), 'from the host\n')
    await run(b, 'echo from-b > /data/b-while-a-paused')
    await test.agent.resume(a.sandboxID)
    expect(await run(a, 'cat /data/while-paused /data/b-while-a-paused')).toBe(
      'from the host\nfrom-b\n',
    )
    await run(a, 'echo awake > /data/a-awake')
    expect(await run(b, 'cat /data/a-awake')).toBe('awake\n')
  })
})

describe('create with volumes', () => {
  it('refuses a volume over a mount of the runtime before anything starts', async () => {
    const request = sandboxRequest({ volumeMounts: [{ path: '/proc', hostDir: volume }] })
    await expect(test.agent.create(request)).rejects.toThrow(VolumeMountError)
    await expect(test.agent.create(request)).rejects.toThrow(
      "invalid mounts:\n\t- volume mount #0: path '/proc' would hide the sandbox's /proc",
    )
    expect(await test.agent.get(request.sandboxID)).toBeUndefined()
  })

  it('fails on a volume it cannot mount, and leaves nothing behind', async () => {
    // What the running sandboxes hold on the host; the failed ones must add nothing to it.
    const before = (await hostLeaks(test.config)).sort()
    const attempt = async (hostDir: string, mountPath = '/data') => {
      const request = sandboxRequest({ volumeMounts: [{ path: mountPath, hostDir }] })
      const failure = test.agent.create(request).then(
        () => 'created',
        (error: unknown) => String(error),
      )
      return { failure: await failure, after: await test.agent.get(request.sandboxID) }
    }
    // An unmounted volume: its directory lies on the host's own file system.
    const unmounted = path.join(scratch, 'unmounted')
    await mkdir(unmounted)
    expect(await attempt(unmounted)).toEqual({
      failure: `Error: volume host directory '${unmounted}' is not a mount point`,
      after: undefined,
    })
    // A file system without idmapped mounts: the helper refuses it.
    const overlay = path.join(scratch, 'overlay')
    for (const dir of ['lower', 'upper', 'work', 'merged'])
      await mkdir(path.join(overlay, dir), { recursive: true })
    await runHostCommand('mount', [
      ...['-t', 'overlay', 'overlay'],
      ...['-o', `lowerdir=${overlay}/lower,upperdir=${overlay}/upper,workdir=${overlay}/work`],
      `${overlay}/merged`,
    ])
    const onOverlay = await attempt(`${overlay}/merged`)
    expect(onOverlay.failure).toContain('the file system may not support idmapped mounts')
    expect(onOverlay.after).toBeUndefined()
    // Staged, then refused by the runtime: a mount point under a file.
    const underFile = await attempt(volume, '/etc/passwd/data')
    expect(underFile.failure).toMatch(/crun .* failed: .*Not a directory/)
    expect(underFile.after).toBeUndefined()
    expect((await hostLeaks(test.config)).sort()).toEqual(before)
  })

  it('mounts a volume inside another after it, whatever the order asked', async () => {
    const inner = await mountTestVolume(scratch, 'inner', 16)
    await writeFile(path.join(inner, 'marker'), 'inner\n')
    const info = await test.agent.create(
      sandboxRequest({
        volumeMounts: [
          { path: '/data/inner', hostDir: inner },
          { path: '/data', hostDir: volume },
        ],
      }),
    )
    try {
      expect(await run(info, 'cat /data/inner/marker')).toBe('inner\n')
      // The outer volume, whose fresh file system has lost+found at its root.
      expect(await run(info, 'test -d /data/lost+found && echo outer')).toBe('outer\n')
    } finally {
      await test.agent.kill(info.sandboxID)
      await removeTestVolume(inner)
    }
  })

  it('stages a volume in a few milliseconds (median of 5, printed beside whole creates)', async () => {
    const userNamespace = path.join(test.config.dataDir, 'sandboxes', a.sandboxID, 'userns')
    const { idMap } = await readRecord(test.config.dataDir, a.sandboxID)
    const stageDir = path.join(scratch, 'stage')
    await writeFile(path.join(volume, 'probe'), '')
    await chown(path.join(volume, 'probe'), 1000, 1000)
    const stages: number[] = []
    const owners: number[] = []
    try {
      for (let round = 0; round < 5; round++) {
        const started = performance.now()
        const [bind] = await stageVolumeMounts({
          helper: path.join(inject('envdBuildDir'), IDMAPPED_MOUNT_HELPER),
          userNamespace,
          mounts: [{ path: '/data', hostDir: volume }],
          stageDir,
        })
        // Through the stage, a file stored as 1000 is sandbox a's user as the host sees it.
        owners.push((await stat(path.join(bind?.source ?? '', 'probe'))).uid - idMap.hostID)
        await detachStages(stageDir)
        stages.push(performance.now() - started)
      }
    } finally {
      await detachStages(stageDir)
    }
    expect(owners).toEqual([1000, 1000, 1000, 1000, 1000])
    expect(await mountsUnder(stageDir)).toEqual([])
    const creates = { plain: [] as number[], volume: [] as number[] }
    for (let round = 0; round < 3; round++) {
      for (const kind of ['plain', 'volume'] as const) {
        const started = performance.now()
        const info = await test.agent.create(kind === 'plain' ? sandboxRequest() : atData())
        creates[kind].push(performance.now() - started)
        await test.agent.kill(info.sandboxID)
      }
    }
    console.log(
      `volume stage+detach p50 ${median(stages)} ms; create p50 without ${median(creates.plain)} ms, with one volume ${median(creates.volume)} ms`,
    )
    expect(stages).toHaveLength(5)
  })
})

describe('kill', () => {
  it("leaves no stage and keeps the volume's data, and the other sandboxes' mounts", async () => {
    await run(c, 'echo from-c > /mnt/volume/from-c')
    await test.agent.kill(c.sandboxID)
    expect(await sandboxMounts(c)).toEqual([])
    expect(await readFile(path.join(volume, 'from-c'), 'utf8')).toBe('from-c\n')
    expect(await run(a, 'cat /data/from-c')).toBe('from-c\n')
  })
})

describe('after an agent restart', () => {
  it("adopts sandboxes with their volumes working, and removes a half-made one's stage", async () => {
    const { dataDir, prefix } = test.config
    await test.agent.close()
    // A crash between staging a new sandbox's volume and its runtime's start.
    const halfMade = `i${randomBytes(10).toString('hex')}`
    await saveHalfMadeRecord(dataDir, halfMade)
    await stageVolumeMounts({
      helper: path.join(inject('envdBuildDir'), IDMAPPED_MOUNT_HELPER),
      userNamespace: path.join(dataDir, 'sandboxes', a.sandboxID, 'userns'),
      mounts: [{ path: '/data', hostDir: volume }],
      stageDir: path.join(dataDir, 'sandboxes', halfMade, 'volumes'),
    })
    // The next agent's new sandboxes run on runsc; the adopted ones stay on crun.
    test = await startTestAgent({ dataDir, prefix, runtime: 'runsc' })
    expect([...test.agent.reconciled.adopted].sort()).toEqual([a.sandboxID, b.sandboxID].sort())
    expect(test.agent.reconciled.removed).toEqual([halfMade])
    expect(await mountsUnder(path.join(dataDir, 'sandboxes', halfMade))).toEqual([])
    await run(a, 'echo after-restart > /data/after-restart')
    expect(await run(b, 'cat /data/after-restart')).toBe('after-restart\n')
  })

  it('a sandbox on runsc mounts the volume too, with the same owners, shared live', async () => {
    const d = await test.agent.create(
      // gVisor keeps its own kernel in the sandbox's memory.
      sandboxRequest({ memoryMB: 512, volumeMounts: [{ path: '/data', hostDir: volume }] }),
    )
    expect(d.runtime).toBe('runsc')
    expect(await run(d, 'cat /data/after-restart; stat -c %U:%G /data/after-restart')).toBe(
      'after-restart\nuser:user\n',
    )
    await run(d, 'echo from-d > /data/from-d')
    expect(await hostOwner('from-d')).toBe('1000:1000')
    expect(await run(a, 'cat /data/from-d; stat -c %U /data/from-d')).toBe('from-d\nuser\n')
    await run(a, 'echo again >> /data/from-d')
    expect(await run(d, 'cat /data/from-d')).toBe('from-d\nagain\n')
    // The attacks again, against gVisor's own kernel.
    expect(await run(d, '/data/id-setuid -u')).toBe('1000\n')
    expect(await refusal(d, 'cat /data/host')).toContain('No such file or directory')
    expect(await refusal(d, 'ln /etc/passwd /data/passwd-d', 'root')).toContain(
      'Invalid cross-device link',
    )
    expect(await refusal(d, 'mknod /data/null-d c 1 3', 'root')).not.toBe('')
    expect(await refusal(d, 'umount /data', 'root')).not.toBe('')
    await test.agent.pause(d.sandboxID)
    await run(a, 'echo while-d-paused > /data/while-d-paused')
    await test.agent.resume(d.sandboxID)
    expect(await run(d, 'cat /data/while-d-paused')).toBe('while-d-paused\n')
    await test.agent.kill(d.sandboxID)
    expect(await sandboxMounts(d)).toEqual([])
  })
})

function median(values: number[]): string {
  const sorted = [...values].sort((x, y) => x - y)
  return (sorted[Math.floor(sorted.length / 2)] ?? 0).toFixed(1)
}
