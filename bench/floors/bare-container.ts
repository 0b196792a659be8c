import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { runHostCommand } from '../../src/agent/host-command.js'
import { readCgroupMode } from '../../src/agent/runtime/cgroup-mode.js'
import { cleanupOnInterrupt } from '../interrupt.js'
import { timeMs } from '../stats.js'

/** The file that freezes a cgroup, and what to write to it, by the host's cgroup version. */
export interface FreezerFile {
  file: string
  freeze: string
  thaw: string
}

/** The freezer of a cgroup (a path under the hierarchy's root, like crun's cgroupsPath). */
export async function freezerOf(cgroupPath: string): Promise<FreezerFile> {
  if ((await readCgroupMode()).kind === 'v2') {
    return { file: `/sys/fs/cgroup${cgroupPath}/cgroup.freeze`, freeze: '1', thaw: '0' }
  }
  return {
    file: `/sys/fs/cgroup/freezer${cgroupPath}/freezer.state`,
    freeze: 'FROZEN',
    thaw: 'THAWED',
  }
}

/**
 * `crun run -d`. crun 1.8.1 refuses a hybrid-cgroup host unless the cgroup2 mount is out of
 * its sight, so there it runs in a private mount namespace without it (host-facts § OCI
 * runtimes); the container's output goes to a file, or the detached init would hold our pipe.
 */
export async function crunRunDetached(
  root: string,
  id: string,
  bundle: string,
  extraArgs: string[] = [],
): Promise<void> {
  const crunArgs = ['--root', root, 'run', '-d', ...extraArgs, '--bundle', bundle, id]
  const output = { outputFile: `${bundle}/crun-output.log` }
  if ((await readCgroupMode()).kind !== 'hybrid') {
    await runHostCommand('crun', crunArgs, output)
    return
  }
  await runHostCommand(
    'unshare',
    [
      ...['-m', '--propagation', 'private', 'sh', '-c'],
      'umount /sys/fs/cgroup/unified 2>/dev/null; exec "$0" "$@"',
      ...['crun', ...crunArgs],
    ],
    output,
  )
}

/** Bare containers on one root file system: no Sandbar, only crun and its default spec. */
export interface BareContainers {
  /** Starts `name` running `sleep`; resolves once the container's process is `sleep`. */
  start(name: string): Promise<void>
  /** `crun delete --force` of a running container. */
  remove(name: string): Promise<void>
  /** The freezer of a started container's cgroup. */
  freezer(name: string): Promise<FreezerFile>
  /** Removes every container still there and the state directory. */
  dispose(): Promise<void>
}

/**
 * The floor the user-facing figures stand beside: `crun spec`'s default container (its own
 * pid, mount, network, ipc and uts namespaces, a cgroup of its own) on `rootfs` read-only, so
 * a shared template layer stays untouched. Names must carry the caller's unique prefix.
 */
export async function bareContainers(rootfs: string): Promise<BareContainers> {
  const dir = await mkdtemp('/tmp/sbt-bench-bare-')
  const root = path.join(dir, 'state')
  await runHostCommand('crun', ['spec', '--bundle', dir])
  const spec = JSON.parse(await readFile(path.join(dir, 'config.json'), 'utf8'))
  const started = new Set<string>()
  const cgroupPath = (name: string) => `/${name}`
  const bundleOf = (name: string) => path.join(dir, name)
  // crun runs a container in a session of its own, which a Ctrl-C at the terminal does not reach.
  const removeAll = cleanupOnInterrupt(async () => {
    for (const name of started) {
      await runHostCommand('crun', ['--root', root, 'delete', '--force', name]).catch(
        () => undefined,
      )
    }
    await rm(dir, { recursive: true, force: true })
  })
  return {
    async start(name) {
      const bundle = bundleOf(name)
      await mkdir(bundle)
      spec.process.terminal = false
      spec.process.args = ['/bin/sleep', 'infinity']
      spec.root = { path: rootfs, readonly: true }
      spec.linux.cgroupsPath = cgroupPath(name)
      await writeFile(path.join(bundle, 'config.json'), JSON.stringify(spec))
      started.add(name)
      const pidFile = path.join(bundle, 'pid')
      await crunRunDetached(root, name, bundle, ['--pid-file', pidFile])
      const pid = (await readFile(pidFile, 'utf8')).trim()
      // `run -d` returns once crun told its init to exec: wait for the exec itself.
      while ((await readFile(`/proc/${pid}/comm`, 'utf8')).trim() !== 'sleep') await sleep(0)
    },
    async remove(name) {
      await runHostCommand('crun', ['--root', root, 'delete', '--force', name])
      started.delete(name)
    },
    freezer: (name) => freezerOf(cgroupPath(name)),
    dispose: removeAll,
  }
}

/** Floor samples of one bare container's life: start to running, freeze+thaw, delete. */
export interface BareContainerFloors {
  start: number[]
  freezeThaw: number[]
  remove: number[]
}

/** `count` bare containers, one after another, each started, frozen and thawed, deleted. */
export async function sampleBareContainers(
  rootfs: string,
  prefix: string,
  count: number,
): Promise<BareContainerFloors> {
  const containers = await bareContainers(rootfs)
  const floors: BareContainerFloors = { start: [], freezeThaw: [], remove: [] }
  try {
    // One unmeasured round first: crun's and the layer's pages come into the page cache.
    for (let i = 0; i <= count; i++) {
      const name = `${prefix}-bare-${i}`
      const start = await timeMs(() => containers.start(name))
      const freezer = await containers.freezer(name)
      const freezeThaw = await timeMs(async () => {
        await writeFile(freezer.file, freezer.freeze)
        await writeFile(freezer.file, freezer.thaw)
      })
      const remove = await timeMs(() => containers.remove(name))
      if (i === 0) continue
      floors.start.push(start)
      floors.freezeThaw.push(freezeThaw)
      floors.remove.push(remove)
    }
    return floors
  } finally {
    await containers.dispose()
  }
}
