import {
  chmod,
  chown,
  type FileHandle,
  mkdir,
  open,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import * as z from 'zod/mini'
import { AgentError } from '../errors.js'
import { runHostCommand } from '../host-command.js'
import { hostNames } from '../host-names.js'
import { createAddressPool } from '../network/address-pool.js'
import { netnsPath } from '../network/network-manager.js'
import { pathExists, readFileIfExists } from '../path-exists.js'
import { readPidFile } from '../pid-file.js'
import { setAppendOnly } from '../rootfs/mount-calls.js'
import { BOOT_ID_PATH } from '../runtime/oci-spec.js'
import type { ContainerCheckpoints } from '../runtime/runtime.js'
import {
  type HostParts,
  ownerOf,
  remountSandboxRoot,
  sandboxPaths,
  writeBootId,
} from '../sandbox-host.js'
import type { SandboxRecord } from '../sandbox-record.js'
import { type IDMap, pinNamespace } from '../user-namespace.js'
import {
  cgroupLimitsSchema,
  containerCgroupDirs,
  readCgroupLimits,
  recreateCgroups,
} from './cgroup-limits.js'
import { DEFAULT_CRIU_BINARY, DUMP_LOG, dumpArgs, RESTORE_LOG, restoreArgs } from './criu-args.js'
import { asNamespaceOwner } from './criu-credentials.js'
import { outsideFiles } from './outside-files.js'
import { compressPages, decompressPages } from './page-images.js'
import { remapUsernsImages } from './userns-image.js'

/**
 * How long CRIU may take before it is killed: a checkpoint of a sandbox's whole memory limit
 * takes seconds; one that hangs (CRIU has, after an internal error) must not hold the sandbox.
 */
const CRIU_TIMEOUT_MS = 60_000

/** Written once a dump is complete and synced: what a crash after it leaves is restorable. */
const COMPLETE_MARKER = 'complete'

/** How long the restore waits for CRIU to make the new netns, and its hook for the wiring. */
const NETNS_TIMEOUT_MS = 30_000
const NETNS_POLL_MS = 2

/** What a checkpoint needs at restore besides CRIU's images. */
const manifestSchema = z.object({
  outsideFiles: z.array(z.object({ key: z.string(), role: z.enum(['output', 'handover']) })),
  cgroups: cgroupLimitsSchema,
  /**
   * The boot ID the processes ran under, where the runtime bound one (oci-spec.ts): the
   * restored ones go on in that boot, in their own sandbox or in one started from a snapshot,
   * as a VM restored from its memory does.
   */
  bootId: z.optional(z.string()),
})

type Manifest = z.infer<typeof manifestSchema>

/** A sandbox's checkpoint: CRIU's images of its processes, in its record directory. */
export function checkpointDir(parts: HostParts, sandboxID: string): string {
  return path.join(parts.records.dir(sandboxID), 'checkpoint')
}

/**
 * Whether the sandbox has a complete checkpoint: its dump ended and was synced. An agent that
 * died between that and saving the record leaves a sandbox whose processes are gone but whose
 * checkpoint restores it (reconcile.ts).
 */
export function hasCompleteCheckpoint(parts: HostParts, sandboxID: string): Promise<boolean> {
  return pathExists(path.join(checkpointDir(parts, sandboxID), COMPLETE_MARKER))
}

/**
 * Writes the processes of a sandbox to disk with CRIU and ends them, freeing their memory; its
 * files stay on its disk, which is synced, and its network goes. What a restart or a host
 * reboot leaves of it is its record directory: enough for restoreSandbox.
 */
export async function checkpointSandbox(
  parts: HostParts,
  record: SandboxRecord,
): Promise<{ imageBytes: number }> {
  const { sandboxID } = record
  const paths = sandboxPaths(parts.records, sandboxID)
  const dir = checkpointDir(parts, sandboxID)
  await dumpProcesses(parts, record, dir, { leaveRunning: false })
  // The disk has no journal (disk-image.ts): what the processes wrote reaches it now, so that
  // a host that goes down with the sandbox hibernated keeps it.
  await runHostCommand('sync', ['--file-system', paths.upper])
  await writeFile(path.join(dir, COMPLETE_MARKER), '')
  await compressPages(dir)
  // The host's connections to the sandbox (the proxy's and the agent's keep-alive sockets)
  // would meet a reset on their next request after the restore: they end now, as E2B's
  // resume ends them, and their holders open new ones.
  const { sandboxAddress } = createAddressPool(parts.config.addressPool).addresses(record.slot)
  await runHostCommand('ss', ['--kill', '--tcp', 'dst', sandboxAddress])
  await parts.network.teardown(sandboxID)
  return { imageBytes: await imagesSize(dir) }
}

/**
 * Writes the processes of a sandbox into `dir` (made anew) with CRIU, with what a restore
 * needs besides CRIU's images; with `leaveRunning` they go on after, frozen as they were.
 */
export async function dumpProcesses(
  parts: HostParts,
  record: SandboxRecord,
  dir: string,
  { leaveRunning }: { leaveRunning: boolean },
): Promise<void> {
  const names = hostNames(parts.config.prefix, record.sandboxID)
  const paths = sandboxPaths(parts.records, record.sandboxID)
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir)
  // The restored tree's root opens some images itself, from inside its user namespace: its own
  // root group (the host ID its root is) may read them, no other host user.
  await chown(dir, 0, record.idMap.hostID)
  await chmod(dir, 0o750)
  const { pid, freezerCgroup } = await runtimeCheckpoints(parts, record).target(names.container)
  const outside = await outsideFiles(freezerCgroup, paths)
  const cgroups = await readCgroupLimits(names.cgroupPath)
  // Where the sandbox's start bound one: startSandboxHost writes the file only for a runtime
  // that binds it, and a sandbox started by an older Sandbar has none.
  const bootId = await readFileIfExists(paths.bootId)
  await writeManifest(dir, { outsideFiles: outside, cgroups, ...(bootId && { bootId }) })
  const args = dumpArgs({
    pid,
    imagesDir: dir,
    rootfs: paths.rootfs,
    freezerCgroup,
    toolboxMountPoint: parts.toolbox.mountPoint,
    bootIdMountPoint: bootId && BOOT_ID_PATH,
    externalFiles: outside.map((file) => file.key),
    leaveRunning,
  })
  await criu(parts, await criuLaunch(parts, record, 'dump'), args, dir, DUMP_LOG)
}

/** The bytes of the images in a checkpoint directory. */
export async function imagesSize(dir: string): Promise<number> {
  const files = await readdir(dir, { withFileTypes: true })
  const sizes = await Promise.all(
    files
      .filter((file) => file.isFile())
      .map(async (file) => (await stat(path.join(dir, file.name))).size),
  )
  return sizes.reduce((sum, size) => sum + size, 0)
}

/**
 * Makes a copy of another sandbox's checkpoint in `record`'s checkpoint directory restorable
 * as `record`: its user namespaces on its host IDs, its cgroups' limits the ones `record`'s
 * container has now.
 */
export async function adoptCheckpoint(
  parts: HostParts,
  record: SandboxRecord,
  sourceIDMap: IDMap,
): Promise<void> {
  const dir = checkpointDir(parts, record.sandboxID)
  const { cgroupPath } = hostNames(parts.config.prefix, record.sandboxID)
  await remapUsernsImages(dir, sourceIDMap, record.idMap)
  const manifest = await readManifest(dir)
  await writeManifest(dir, { ...manifest, cgroups: await readCgroupLimits(cgroupPath) })
}

async function readManifest(dir: string): Promise<Manifest> {
  return manifestSchema.parse(JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')))
}

async function writeManifest(dir: string, manifest: Manifest): Promise<void> {
  await writeFile(path.join(dir, 'manifest.json'), JSON.stringify(manifest))
}

/**
 * Starts a checkpointed sandbox's processes again from its checkpoint: its root mounted again
 * if a restart took it, CRIU's restore into a new netns that the agent wires as at create
 * (same address, rules and names), and the runtime told of the restored init.
 */
export async function restoreSandbox(
  parts: HostParts,
  record: SandboxRecord,
  layers: string[],
  /** The address of the sandbox the checkpoint was taken of, when it was another's. */
  formerAddress?: string,
): Promise<void> {
  const { sandboxID } = record
  const checkpoints = runtimeCheckpoints(parts, record)
  const names = hostNames(parts.config.prefix, sandboxID)
  const paths = sandboxPaths(parts.records, sandboxID)
  const dir = checkpointDir(parts, sandboxID)
  const manifest = await readManifest(dir)
  await remountSandboxRoot(parts, record, layers)
  await decompressPages(dir)
  // A restore cut short by a crash may have left part of a tree in the container's cgroups.
  await killCgroupProcesses(await containerCgroupDirs(names.cgroupPath))
  // A crash between a restore's wiring and its end leaves a network: the wiring comes anew.
  await parts.network.teardown(sandboxID)
  // CRIU reopens each stand-in through /proc/self/fd from inside the sandbox's user namespace,
  // with the flags the dumped descriptor had: the sandbox's root owns the empty handover, and
  // may append to its output log while the restore runs (outputOpenToRestore).
  const handles = await Promise.all(
    manifest.outsideFiles.map((file) =>
      file.role === 'output' ? open(paths.output, 'a') : emptyHandover(dir, record.idMap.hostID),
    ),
  )
  if (manifest.bootId !== undefined) await writeBootId(paths.bootId, manifest.bootId)
  try {
    const script = path.join(dir, 'setup-namespaces.sh')
    await writeFile(script, SETUP_NAMESPACES_HOOK, { mode: 0o700 })
    const pidFile = path.join(dir, 'restored.pid')
    const args = restoreArgs({
      imagesDir: dir,
      rootfs: paths.rootfs,
      toolboxDir: parts.toolbox.dir,
      bootIdFile: manifest.bootId && paths.bootId,
      // The handles are the tool's descriptors 3, 4, … (runHostCommand's inheritFDs).
      inheritFds: manifest.outsideFiles.map((file, index) => ({ fd: 3 + index, key: file.key })),
      actionScript: script,
      pidFile,
    })
    // A host restart took the cgroups; the runtime's limits come back from the manifest.
    await recreateCgroups(manifest.cgroups)
    const launch = await criuLaunch(parts, record, 'restore')
    const env = {
      SANDBAR_RESTORE_DIR: dir,
      SANDBAR_CGROUP_DIRS: (await containerCgroupDirs(names.cgroupPath)).join('\n'),
    }
    await outputOpenToRestore(paths.output, record.idMap.hostID, () => {
      const restored = criu(parts, launch, args, dir, RESTORE_LOG, {
        inheritFDs: handles.map((handle) => handle.fd),
        env,
      })
      const wired = wireRestoredNetwork(parts, record, dir, restored, formerAddress)
      return Promise.all([restored, wired])
    })
    await checkpoints.restored(names.container, await readPidFile(pidFile))
  } catch (error) {
    await parts.network.teardown(sandboxID)
    throw error
  } finally {
    await Promise.all(handles.map((handle) => handle.close()))
  }
  await rm(dir, { recursive: true, force: true })
}

/**
 * Runs `restore` while the sandbox's root group may append to its output log (sandbox-host.ts
 * keeps it root's alone): CRIU's restored init reopens its stdout through /proc/self/fd, as
 * the sandbox's root. No code of the sandbox runs before the restore ends, and a descriptor
 * opened then keeps working after the file is root's alone again.
 */
async function outputOpenToRestore<T>(
  output: string,
  sandboxRoot: number,
  restore: () => Promise<T>,
): Promise<T> {
  const setOwner = async (gid: number, mode: number) => {
    // Append-only also refuses chown and chmod: off for the change, on again after it.
    setAppendOnly(output, false)
    await chown(output, 0, gid)
    await chmod(output, mode)
    setAppendOnly(output, true)
  }
  await setOwner(sandboxRoot, 0o620)
  try {
    return await restore()
  } finally {
    await setOwner(0, 0o600)
  }
}

/**
 * What stands in for envd's handover, which envd emptied at its start: an empty file like it,
 * as CRIU checks that the file it is given has the mode the dumped one had.
 */
async function emptyHandover(dir: string, sandboxRoot: number): Promise<FileHandle> {
  const file = path.join(dir, 'handover')
  const handle = await open(file, 'w+', 0o600)
  await handle.chown(sandboxRoot, sandboxRoot)
  await rm(file)
  return handle
}

/**
 * CRIU's setup-namespaces hook: the restored tree is in its new namespaces, its sockets not
 * yet restored. It names the tree's init to the agent, which pins and wires the netns (a
 * socket bound to the sandbox's address needs that address), and waits until it is done.
 */
const SETUP_NAMESPACES_HOOK = `#!/bin/sh
[ "$CRTOOLS_SCRIPT_ACTION" = setup-namespaces ] || exit 0
echo "$CRTOOLS_INIT_PID" > "$SANDBAR_RESTORE_DIR/netns-pid.new"
mv "$SANDBAR_RESTORE_DIR/netns-pid.new" "$SANDBAR_RESTORE_DIR/netns-pid"
i=0
until [ -e "$SANDBAR_RESTORE_DIR/network-ready" ]; do
  i=$((i + 1))
  [ "$i" -lt ${NETNS_TIMEOUT_MS / 10} ] || exit 1
  sleep 0.01
done
`

/**
 * Waits for the hook to name the new netns, then pins it at the sandbox's name and wires it.
 * A checkpoint of another sandbox has sockets bound to that sandbox's address (envd's
 * forwards of loopback services among them): the address is put on the restored netns's
 * loopback, where they bind again, while traffic to and from the outside uses this
 * sandbox's own. envd forwards those services from the new address.
 */
async function wireRestoredNetwork(
  parts: HostParts,
  record: SandboxRecord,
  dir: string,
  restore: Promise<unknown>,
  formerAddress: string | undefined,
): Promise<void> {
  let ended = false
  restore.then(
    () => (ended = true),
    () => (ended = true),
  )
  const names = hostNames(parts.config.prefix, record.sandboxID)
  const deadline = Date.now() + NETNS_TIMEOUT_MS
  for (;;) {
    const pid = await readFile(path.join(dir, 'netns-pid'), 'utf8').catch(() => undefined)
    if (pid !== undefined) {
      await pinNamespace(Number(pid.trim()), 'net', netnsPath(names.netns))
      const network = await parts.network.setup(record.sandboxID, record.slot, record.egress, {
        netnsExists: true,
      })
      if (formerAddress !== undefined && formerAddress !== network.sandboxAddress) {
        await runHostCommand('ip', [
          ...['-netns', names.netns],
          ...['address', 'add', `${formerAddress}/32`, 'dev', 'lo'],
        ])
      }
      await writeFile(path.join(dir, 'network-ready'), '')
      return
    }
    if (ended) return
    if (Date.now() > deadline) throw new Error('CRIU did not make the restored netns in time')
    await sleep(NETNS_POLL_MS)
  }
}

function runtimeCheckpoints(parts: HostParts, record: SandboxRecord): ContainerCheckpoints {
  const { checkpoints } = parts.runtimes.get(record.runtime)
  if (checkpoints === undefined) {
    throw new Error(`sandboxes on ${record.runtime} cannot be checkpointed (crun only)`)
  }
  return checkpoints
}

/** Runs CRIU after `launch` (the argv that sets up its process); a failure carries the errors
 * from CRIU's log, which say what went wrong. */
async function criu(
  parts: HostParts,
  launch: string[],
  args: string[],
  dir: string,
  log: string,
  options: { inheritFDs?: number[]; env?: Record<string, string> } = {},
): Promise<void> {
  const binary = parts.config.criuBinary ?? DEFAULT_CRIU_BINARY
  const [file = '', ...rest] = [...launch, binary, ...args]
  try {
    await runHostCommand(file, rest, { ...options, timeoutMs: CRIU_TIMEOUT_MS })
  } catch (error) {
    if (!(error instanceof AgentError)) throw error
    const text = await readFile(path.join(dir, log), 'utf8').catch(() => '')
    const errors = text
      .split('\n')
      .filter((line) => line.includes('Error ('))
      .slice(-5)
    throw new AgentError(
      `criu ${args[0]} failed`,
      error.command,
      error.exitCode,
      [error.stderr.trim(), ...errors].filter((line) => line !== '').join('\n'),
    )
  }
}

/**
 * How CRIU starts. A dump as the sandbox's namespace owner (criu-credentials.ts). A restore as
 * root, from inside the container's cgroups, which the restored tree inherits: as the owner,
 * CRIU could neither set the restored UTS namespace's hostname (a sysctl only the host's root
 * UID writes) nor give a restored task a UID other than root's (its restorer keeps
 * capabilities across setresuid only when CRIU runs as root).
 */
async function criuLaunch(
  parts: HostParts,
  record: SandboxRecord,
  operation: 'dump' | 'restore',
): Promise<string[]> {
  return operation === 'dump'
    ? asNamespaceOwner(ownerOf(parts, record))
    : ['sh', '-c', JOIN_CGROUPS_AND_EXEC, 'sh']
}

/** Moves the shell into every cgroup directory named, then becomes the command. */
const JOIN_CGROUPS_AND_EXEC =
  'for dir in $SANDBAR_CGROUP_DIRS; do echo $$ > "$dir/cgroup.procs" || exit 1; done; exec "$@"'

/** SIGKILLs every process in the cgroups named (what is left of an interrupted restore). */
async function killCgroupProcesses(cgroupDirs: string[]): Promise<void> {
  for (const dir of cgroupDirs) {
    const procs = await readFile(path.join(dir, 'cgroup.procs'), 'utf8').catch(() => '')
    for (const pid of procs.split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL')
      } catch {
        // Gone meanwhile.
      }
    }
  }
}
