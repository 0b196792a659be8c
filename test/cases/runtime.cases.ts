import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chown, mkdir, readdir, readFile, rmdir, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { detachStages, IDMAPPED_MOUNT_HELPER } from '../../src/agent/rootfs/idmapped-mount.js'
import { readCgroupMode } from '../../src/agent/runtime/cgroup-mode.js'
import { SECCOMP_BPF_ANNOTATION } from '../../src/agent/runtime/oci-cli-runtime.js'
import type {
  ContainerSpec,
  Runtime,
  RuntimeGap,
  RuntimeName,
} from '../../src/agent/runtime/runtime.js'
import {
  createUserNamespace,
  OWNER_BASE,
  USER_NAMESPACE_HELPER,
  unpinNamespace,
} from '../../src/agent/user-namespace.js'
import { stageVolumeMounts } from '../../src/agent/volumes/volume-stage.js'
import {
  isLive,
  leftoverCgroupDirs,
  readLimits,
  readOomKills,
  readPids,
} from '../agent/cgroup-probe.js'
import {
  addNetns,
  deleteNetns,
  makeBusyboxRootfs,
  makeTempDir,
  removeTempDir,
  TEST_ID_MAP,
  testPrefix,
} from '../agent/runtime-fixture.js'
import { mountTestVolume, removeTestVolume } from '../agent/volume-fixture.js'
import { EXPECTED_PROBE_RESULTS, SYSCALL_PROBE } from '../support/syscall-probe.js'

export interface RuntimeCaseOptions {
  name: RuntimeName
  newRuntime(stateRoot: string): Runtime
}

type Resources = ContainerSpec['resources']
type Binds = ContainerSpec['readonlyBinds']
const RESOURCES: Resources = { cpuCount: 1, memoryMB: 64, pids: 32 }

/** The host's /usr (python3 and its libraries) read-only in a busybox container. */
const HOST_USR: Binds = [
  { source: '/usr', destination: '/usr' },
  { source: '/usr/lib', destination: '/lib' },
  { source: '/usr/lib64', destination: '/lib64' },
]

interface StartOptions {
  resources?: Resources
  readonlyBinds?: Binds
  volumeBinds?: Binds
  bootIdFile?: string
}

/** One test's host objects, all named with its prefix; `cleanup` runs even on failure. */
interface TestWorld {
  prefix: string
  /** Where each container's bundle is, `<dir>/<id>`. */
  dir: string
  runtime: Runtime
  /** Runs a container with `sh -c script`; `runMs` is the time of `Runtime.run` alone. */
  start(script: string, options?: StartOptions): Promise<{ id: string; pid: number; runMs: number }>
  cleanup(): Promise<void>
}

/** The Runtime suite, run against every installed implementation (STYLE.md habit 3). */
export function runRuntimeCases({ name, newRuntime }: RuntimeCaseOptions): void {
  // Constructing a runtime touches nothing; its gaps decide which cases apply.
  const { gaps } = newRuntime(join(tmpdir(), 'sbt-unused'))
  /** `it`, or a skip titled with the measured reason when the runtime lacks `gap`. */
  const itUnless = (gap: RuntimeGap) => (title: string, fn: () => Promise<void>) => {
    const reason = gaps[gap]
    if (reason === undefined) it(title, fn)
    else it.skip(`${title} (skipped on ${name}: ${reason})`, fn)
  }

  describe(`${name} runtime`, () => {
    let sharedDir = ''
    let rootfs = ''
    let world: TestWorld | undefined

    beforeAll(async () => {
      sharedDir = await makeTempDir(`sbt-${name}`)
      rootfs = await makeBusyboxRootfs(sharedDir)
    })
    afterAll(async () => removeTempDir(sharedDir))
    afterEach(async () => {
      await world?.cleanup()
      world = undefined
    })

    async function setup(): Promise<TestWorld> {
      world = await newWorld(newRuntime, rootfs)
      return world
    }

    it("runs a container whose root is its ID map's first host ID", async () => {
      const { runtime, start } = await setup()
      const { id, pid } = await start('sleep 1000')
      expect(await runtime.state(id)).toEqual({ id, status: 'running', pid })
      expect(pid).toBeGreaterThan(0)
      const status = await readFile(`/proc/${pid}/status`, 'utf8')
      const root = TEST_ID_MAP.hostID
      expect(status).toMatch(new RegExp(`^Uid:\t${root}\t${root}\t${root}\t${root}$`, 'm'))
      const uidMap = await readFile(`/proc/${pid}/uid_map`, 'utf8')
      expect(uidMap.trim().split(/\s+/)).toEqual(['0', String(root), '65536'])
      // A seccomp filter in force, and Docker's default capability set less NET_RAW where the
      // host sees the container's own process.
      expect(status).toMatch(/^Seccomp:\t2$/m)
      if (gaps.hostProcesses === undefined) expect(status).toMatch(/^CapBnd:\t00000000a80405fb$/m)
    })

    it('times run --detach and pause+resume (medians of 5, printed)', async () => {
      const { runtime, start } = await setup()
      const runs: number[] = []
      const freezes: number[] = []
      for (let round = 0; round < 5; round++) {
        const { id, runMs } = await start('sleep 1000')
        runs.push(runMs)
        const paused = performance.now()
        await runtime.pause(id)
        await runtime.resume(id)
        freezes.push(performance.now() - paused)
      }
      console.log(
        `${name}: run --detach p50 ${median(runs)} ms, pause+resume p50 ${median(freezes)} ms`,
      )
      expect(runs).toHaveLength(5)
    })

    it('refuses nested namespaces, mounts and io_uring to root and to a plain user', async () => {
      const { dir, start } = await setup()
      await writeFile(join(rootfs, 'syscall-probe.py'), SYSCALL_PROBE)
      // runsc answers every refusal with EPERM, and so lets clone3 through to its own kernel.
      const expected =
        gaps.seccompErrno === undefined
          ? EXPECTED_PROBE_RESULTS
          : {
              ...EXPECTED_PROBE_RESULTS,
              kcmp: 'EPERM',
              'clone3(CLONE_NEWUSER)': 'ok',
            }
      // Twice: the runtime compiles the profile for the first container, and crun's second
      // gets the filter it kept (SECCOMP_BPF_ANNOTATION).
      for (const round of [0, 1]) {
        const { id } = await start(
          [
            'python3=/usr/bin/python3',
            '$python3 /syscall-probe.py > /tmp/$ID.root.t && mv /tmp/$ID.root.t /tmp/$ID.root',
            '$python3 /syscall-probe.py 1000 > /tmp/$ID.user.t && mv /tmp/$ID.user.t /tmp/$ID.user',
            // busybox unshare, as a user would try it: a user namespace where they are root.
            '{ unshare -U -r true; echo "exit $?"; } > /tmp/$ID.unshare.t 2>&1',
            'mv /tmp/$ID.unshare.t /tmp/$ID.unshare',
            'sleep 1000',
          ].join('; '),
          { readonlyBinds: HOST_USR },
        )
        const config = JSON.parse(await readFile(join(dir, id, 'config.json'), 'utf8'))
        const kept = SECCOMP_BPF_ANNOTATION in (config.annotations ?? {})
        expect(kept).toBe(round === 1 && name === 'crun')
        const asRoot = JSON.parse(await waitForFile(join(rootfs, 'tmp', `${id}.root`)))
        const asUser = JSON.parse(await waitForFile(join(rootfs, 'tmp', `${id}.user`)))
        expect(asRoot).toEqual(expected)
        expect(asUser).toEqual(expected)
        expect(await waitForFile(join(rootfs, 'tmp', `${id}.unshare`))).toBe(
          'unshare: unshare(0x10000000): Operation not permitted\nexit 1\n',
        )
      }
    })

    itUnless('ownBootId')(
      'shows the container the boot ID it is given, which its root cannot change',
      async () => {
        const { dir, start } = await setup()
        const bootIdFile = join(dir, 'boot_id')
        const given = `${randomUUID()}\n`
        await writeFile(bootIdFile, given, { mode: 0o444 })
        const { id } = await start(
          [
            'id=/proc/sys/kernel/random/boot_id',
            '{ cat $id; echo x > $id && echo written; cat $id; } > /tmp/$ID.t 2>&1',
            'mv /tmp/$ID.t /tmp/$ID.boot',
            'sleep 1000',
          ].join('; '),
          { bootIdFile },
        )
        const seen = await waitForFile(join(rootfs, 'tmp', `${id}.boot`))
        expect(seen).toMatch(new RegExp(`^${given}sh: can't create .*\n${given}$`))
        expect(await readFile(bootIdFile, 'utf8')).toBe(given)
      },
    )

    it("shows the container's own network devices in /sys, and leaves no mount on the host", async () => {
      const { start } = await setup()
      const { id } = await start(
        'ls /sys/class/net /sys/devices/virtual/net > /tmp/$ID.t 2>&1; mv /tmp/$ID.t /tmp/$ID.net; sleep 1000',
      )
      // The test's netns holds only lo; the host's interfaces and other containers' veths do
      // not show. gVisor's own sysfs has no network devices at all.
      const listing = await waitForFile(join(rootfs, 'tmp', `${id}.net`))
      expect(listing).toBe(
        gaps.hostProcesses === undefined
          ? '/sys/class/net:\nlo\n\n/sys/devices/virtual/net:\nlo\n'
          : 'ls: /sys/class/net: No such file or directory\nls: /sys/devices/virtual/net: No such file or directory\n',
      )
      expect(await readFile('/proc/self/mountinfo', 'utf8')).not.toContain(`${id}/sys`)
    })

    it("binds an idmapped volume read-write, where stored IDs are the container's own", async () => {
      const { runtime, start } = await setup()
      const volume = await mountTestVolume(sharedDir, 'volume', 16)
      const userNamespace = join(sharedDir, 'userns')
      const stageDir = join(sharedDir, 'stages')
      try {
        await writeFile(join(volume, 'by-user'), '')
        await chown(join(volume, 'by-user'), 1000, 1000)
        await createUserNamespace({
          helper: join(inject('envdBuildDir'), USER_NAMESPACE_HELPER),
          file: userNamespace,
          owner: OWNER_BASE + 2,
          idMap: TEST_ID_MAP,
        })
        const volumeBinds = await stageVolumeMounts({
          helper: join(inject('envdBuildDir'), IDMAPPED_MOUNT_HELPER),
          userNamespace,
          mounts: [{ path: '/volume', hostDir: volume }],
          stageDir,
        })
        const script = [
          'stat -c %u:%g /volume/by-user > /volume/seen.t',
          'touch /volume/by-root /volume/chowned',
          'chown 1000:1000 /volume/chowned',
          'mv /volume/seen.t /volume/seen',
          'sleep 1000',
        ].join('; ')
        // The agent's order: the stage goes once the container runs, which keeps its bind.
        await start(script, { volumeBinds }).finally(() => detachStages(stageDir))
        expect(await waitForFile(join(volume, 'seen'))).toBe('1000:1000\n')
        const owner = async (file: string) => {
          const stats = await stat(join(volume, file))
          return `${stats.uid}:${stats.gid}`
        }
        expect(await owner('by-root')).toBe('0:0')
        expect(await owner('chowned')).toBe('1000:1000')
      } finally {
        // The container first: while it runs it holds the volume's file system.
        for (const container of await runtime.list()) await runtime.remove(container.id)
        await detachStages(stageDir)
        await unpinNamespace(userNamespace)
        await removeTestVolume(volume)
      }
    })

    it('lists what runs, each with the init PID its run answered', async () => {
      const { runtime, start } = await setup()
      const first = await start('sleep 1000')
      const second = await start('sleep 1000')
      const listed = await runtime.list()
      const byID = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id)
      expect(listed.map(({ id, pid }) => ({ id, pid })).sort(byID)).toEqual(
        [first, second].map(({ id, pid }) => ({ id, pid })).sort(byID),
      )
      expect(listed.every((state) => state.status === 'running')).toBe(true)
    })

    it('writes the limits into the cgroup', async () => {
      const { start, prefix } = await setup()
      const { id } = await start('sleep 1000', {
        resources: { cpuCount: 2, memoryMB: 96, pids: 40 },
      })
      const limits = await readLimits(cgroupPathOf(prefix, id))
      // A runtime with the pidsLimit gap gets no pids limit in its spec: the cgroup keeps "max".
      const pids = gaps.pidsLimit === undefined ? 40 : Number.POSITIVE_INFINITY
      expect(limits).toEqual({ cpuQuota: 200_000, cpuPeriod: 100_000, memory: 96 << 20, pids })
    })

    itUnless('oomKillInside')('OOM-kills a process that allocates beyond memoryMB', async () => {
      const { start, prefix } = await setup()
      // busybox tail buffers a line without end: 200 MiB of zeros is one such line.
      const { id } = await start(
        'head -c 200m /dev/zero | tail > /dev/null; echo $? > /tmp/$ID.oom; sleep 1000',
      )
      const exit = await waitForFile(join(rootfs, 'tmp', `${id}.oom`))
      expect(exit.trim()).toBe('137')
      expect(await readOomKills(cgroupPathOf(prefix, id))).toBe(1)
    })

    itUnless('pidsLimit')(
      'bounds a fork loop with the pids limit, and the sandbox survives',
      async () => {
        const { runtime, start, prefix } = await setup()
        // busybox sh exits when a fork fails, so the loop runs beside the init, not as it.
        const { id } = await start(
          '(while true; do sleep 100 & done) 2>/dev/null & exec sleep 1000',
          { resources: { ...RESOURCES, pids: 20 } },
        )
        await sleep(1000)
        const pids = await readPids(cgroupPathOf(prefix, id))
        expect(pids.current).toBeGreaterThan(10)
        expect(pids.current).toBeLessThanOrEqual(20)
        expect(pids.refusedForks).toBeGreaterThan(0)
        expect((await runtime.state(id))?.status).toBe('running')
      },
    )

    it('pause stops a counter and resume continues it', async () => {
      const { runtime, start } = await setup()
      const { id } = await start(
        // Written to a temp file and renamed: a reader never sees the file half-written.
        'i=0; while true; do i=$((i+1)); echo $i > /tmp/$ID.t; mv /tmp/$ID.t /tmp/$ID.n; usleep 20000; done',
      )
      const counter = join(rootfs, 'tmp', `${id}.n`)
      await waitForFile(counter)
      const started = performance.now()
      await runtime.pause(id)
      const pauseMs = performance.now() - started
      expect((await runtime.state(id))?.status).toBe('paused')
      const frozen = await readFile(counter, 'utf8')
      await sleep(200)
      expect(await readFile(counter, 'utf8')).toBe(frozen)
      const resumeStarted = performance.now()
      await runtime.resume(id)
      const total = pauseMs + performance.now() - resumeStarted
      console.log(`${name}: pause+resume ${total.toFixed(1)} ms`)
      expect((await runtime.state(id))?.status).toBe('running')
      // Counting on: within FILE_TIMEOUT_MS, for a starved host (the cgroup v2 guest runs at
      // nice 19 beside the other projects, where runsc took 200 ms and more to go on).
      const deadline = Date.now() + FILE_TIMEOUT_MS
      while (Number(await readFile(counter, 'utf8')) <= Number(frozen) && Date.now() < deadline) {
        await sleep(20)
      }
      expect(Number(await readFile(counter, 'utf8'))).toBeGreaterThan(Number(frozen))
    })

    it('remove leaves no container, cgroup or process behind, and is idempotent', async () => {
      const { runtime, start, prefix } = await setup()
      const { id, pid } = await start('sleep 1000 & sleep 1000')
      await runtime.remove(id)
      expect(await runtime.state(id)).toBeUndefined()
      expect(isLive(pid)).toBe(false)
      expect(await leftoverCgroupDirs(cgroupPathOf(prefix, id))).toEqual([])
      await runtime.remove(id)
      await runtime.remove(`${prefix}-unknown`)
    })

    it('knows no containers in a fresh state directory', async () => {
      const { prefix } = await setup()
      const fresh = newRuntime(join(sharedDir, `${prefix}-fresh`))
      expect(await fresh.list()).toEqual([])
      expect(await fresh.state(`${prefix}-none`)).toBeUndefined()
      await fresh.remove(`${prefix}-none`)
    })

    it('removes a container whose processes have all ended', async () => {
      const { runtime, start, prefix } = await setup()
      const { id, pid } = await start('exit 3')
      const deadline = Date.now() + FILE_TIMEOUT_MS
      while (isLive(pid) && Date.now() < deadline) await sleep(20)
      expect(isLive(pid)).toBe(false)
      await runtime.remove(id)
      expect(await runtime.state(id)).toBeUndefined()
      expect(await leftoverCgroupDirs(cgroupPathOf(prefix, id))).toEqual([])
    })

    it('removes a paused container', async () => {
      const { runtime, start, prefix } = await setup()
      const { id, pid } = await start('sleep 1000')
      await runtime.pause(id)
      await runtime.remove(id)
      expect(await runtime.state(id)).toBeUndefined()
      expect(isLive(pid)).toBe(false)
      expect(await leftoverCgroupDirs(cgroupPathOf(prefix, id))).toEqual([])
    })
  })
}

function median(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b)
  return (sorted[Math.floor(sorted.length / 2)] ?? 0).toFixed(1)
}

function cgroupPathOf(prefix: string, id: string): string {
  return `/sandbar-${prefix}/${id}`
}

async function newWorld(newRuntime: (stateRoot: string) => Runtime, rootfs: string) {
  const prefix = testPrefix()
  const dir = await makeTempDir(prefix)
  const runtime = newRuntime(join(dir, 'state'))
  const started: { id: string; pid: number; netns: string }[] = []
  const start = async (script: string, options: StartOptions = {}) => {
    const id = `${prefix}-c${started.length}`
    const bundleDir = join(dir, id)
    await mkdir(bundleDir)
    const netnsPath = await addNetns(id)
    const runStarted = performance.now()
    const pid = await runtime.run({
      id,
      bundleDir,
      outputFile: join(bundleDir, 'output.log'),
      rootfs,
      readonlyBinds: options.readonlyBinds ?? [],
      volumeBinds: options.volumeBinds ?? [],
      netnsPath,
      cgroupsPath: cgroupPathOf(prefix, id),
      idMap: TEST_ID_MAP,
      hostname: id,
      resources: options.resources ?? RESOURCES,
      process: { args: ['sh', '-c', script], env: { PATH: '/bin', ID: id }, cwd: '/' },
      ...(options.bootIdFile === undefined ? {} : { bootIdFile: options.bootIdFile }),
    })
    const runMs = performance.now() - runStarted
    started.push({ id, pid, netns: id })
    return { id, pid, runMs }
  }
  const cleanup = async () => {
    for (const container of started) {
      await runtime.remove(container.id).catch(() => killByPID(container.pid))
      await deleteNetns(container.netns)
    }
    await removeTempDir(dir)
    await expectNoLeaks(prefix, started)
  }
  return { prefix, dir, runtime, start, cleanup }
}

/** The fallback when remove fails: SIGKILL to the init, which takes its pid namespace along. */
function killByPID(pid: number): void {
  if (pid > 0 && isLive(pid)) process.kill(pid, 'SIGKILL')
}

/** STYLE.md habit 12: nothing named with the prefix survives a test. */
async function expectNoLeaks(prefix: string, started: { pid: number }[]): Promise<void> {
  for (const mountPoint of (await readCgroupMode()).mountPoints) {
    // The agent-level parent the runtime created for this prefix; the leaves must be gone.
    await rmdir(join(mountPoint, `sandbar-${prefix}`)).catch(() => undefined)
    const names = await readdir(mountPoint)
    expect(names.filter((entry) => entry.includes(prefix))).toEqual([])
  }
  const netns = existsSync('/run/netns') ? await readdir('/run/netns') : []
  expect(netns.filter((entry) => entry.startsWith(prefix))).toEqual([])
  for (const { pid } of started) expect(isLive(pid)).toBe(false)
}

/**
 * How long a container's first output may take: 15 s, or what the emulated cgroup-v2 guest
 * allows a sandbox to start in (`SANDBAR_TEST_ENVD_START_TIMEOUT_MS`), where processes start
 * many times slower.
 */
const FILE_TIMEOUT_MS = Number(process.env.SANDBAR_TEST_ENVD_START_TIMEOUT_MS ?? 15_000)

async function waitForFile(path: string, timeoutMs = FILE_TIMEOUT_MS): Promise<string> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (existsSync(path)) {
      const text = await readFile(path, 'utf8')
      if (text !== '') return text
    }
    if (Date.now() > deadline) throw new Error(`${path} did not appear in ${timeoutMs} ms`)
    await sleep(20)
  }
}
