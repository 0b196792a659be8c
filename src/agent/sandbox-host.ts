import { randomUUID } from 'node:crypto'
import { chmod, chown, type FileHandle, mkdir, open, unlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { DEFAULT_PATH, ENVD_PORT, encodeHandover } from '../envd/index.js'
import { settleAll } from '../settle-all.js'
import { hostNames, SANDBOX_HOSTNAME } from './host-names.js'
import type { AgentConfig, VolumeMount } from './index.js'
import { createAddressPool } from './network/address-pool.js'
import type { NetworkManager } from './network/network.js'
import { netnsPath } from './network/network-manager.js'
import type { BlankDisks } from './rootfs/blank-disks.js'
import { mountDiskImage, mountImage, removeDiskImage } from './rootfs/disk-image.js'
import { detachStages, IDMAPPED_MOUNT_HELPER } from './rootfs/idmapped-mount.js'
import { mountIdmappedOverlay } from './rootfs/idmapped-overlay.js'
import { isMounted, setAppendOnly } from './rootfs/mount-calls.js'
import type { Toolbox } from './rootfs/rootfs.js'
import { unmountAll } from './rootfs/unmount.js'
import { removeContainerCgroups } from './runtime/container-cgroups.js'
import { netnsSysfsDir, unmountNetnsSysfs } from './runtime/netns-sysfs.js'
import type { RuntimeSet } from './runtime/runtime-set.js'
import type { SandboxRecord, SandboxRecords } from './sandbox-record.js'
import {
  createUserNamespace,
  namespaceOwner,
  USER_NAMESPACE_HELPER,
  unpinNamespace,
} from './user-namespace.js'
import { stageVolumeMounts } from './volumes/volume-stage.js'

/** The agent's parts that build and remove a sandbox's host objects. */
export interface HostParts {
  config: AgentConfig
  runtimes: RuntimeSet
  network: NetworkManager
  toolbox: Toolbox
  records: SandboxRecords
  blankDisks: BlankDisks
}

export type SandboxPaths = ReturnType<typeof sandboxPaths>

/** Where one sandbox's files live under its record directory. */
export function sandboxPaths(records: SandboxRecords, sandboxID: string) {
  const dir = records.dir(sandboxID)
  // The sandbox's own disk holds everything it can grow: its upper layer and its output.
  const disk = path.join(dir, 'disk')
  return {
    dir,
    image: path.join(dir, 'disk.img'),
    disk,
    upper: path.join(disk, 'upper'),
    work: path.join(disk, 'work'),
    rootfs: path.join(dir, 'rootfs'),
    bundle: path.join(dir, 'bundle'),
    output: path.join(disk, 'output.log'),
    userns: path.join(dir, 'userns'),
    // Where the template's layers appear idmapped for this sandbox until its overlay holds them.
    layers: path.join(dir, 'layers'),
    // Where its volumes appear idmapped for it until the container holds its own binds.
    volumes: path.join(dir, 'volumes'),
    handover: path.join(dir, 'handover'),
    bootId: path.join(dir, 'boot_id'),
  }
}

export interface StartedSandboxHost {
  address: string
  initPid: number
}

/**
 * Builds a sandbox's host objects in dependency order: network, overlay root, staged volumes,
 * container; returns the sandbox's address and its container's init PID (tini, envd's parent).
 * The caller removes whatever exists if this throws. With `existingDisk` the sandbox boots
 * again over the disk it had (stopSandboxHost left it), else over a new one. Without `wire`
 * its netns stays unwired: a restore replaces the container's processes and their netns
 * (sandbox-checkpoint.ts).
 */
export async function startSandboxHost(
  parts: HostParts,
  record: SandboxRecord,
  /** Layer directories, lowest first. */
  layers: string[],
  /** Checked beforehand (checkVolumeMounts). */
  volumeMounts: readonly VolumeMount[] = [],
  { existingDisk = false, wire = true }: { existingDisk?: boolean; wire?: boolean } = {},
): Promise<StartedSandboxHost> {
  const { config } = parts
  const names = hostNames(config.prefix, record.sandboxID)
  const paths = sandboxPaths(parts.records, record.sandboxID)
  const { idMap } = record
  await makeSandboxDir(paths, record)
  // The user and network namespaces come first, in one unshare (user-namespace.ts: CRIU needs
  // the netns to be the sandbox's own). The network is wired as soon as they exist, beside the
  // sandbox's disk and root, whose layers are idmapped through the user namespace. Everything
  // settles before this returns or throws, so the caller's cleanup never races a step.
  const namespaces = createUserNamespace({
    helper: userNamespaceHelper(config),
    file: paths.userns,
    netnsFile: netnsPath(names.netns),
    owner: ownerOf(parts, record),
    idMap: record.idMap,
  })
  const wired = namespaces.then(() =>
    wire
      ? parts.network.setup(record.sandboxID, record.slot, record.egress, { netnsExists: true })
      : undefined,
  )
  const disk = existingDisk
    ? isMounted(paths.disk).then((mounted) =>
        mounted ? undefined : mountImage(paths.image, paths.disk),
      )
    : mountDiskImage(
        { image: paths.image, mountPoint: paths.disk, sizeMB: record.diskSizeMB },
        parts.blankDisks,
      )
  const rootfs = Promise.all([namespaces, disk])
    .then(() => (existingDisk ? undefined : prepareDisk(paths, record)))
    .then(() => mountOverlay(parts, paths, layers))
  await settleAll([namespaces, disk, wired, rootfs])
  const volumeBinds = await stageVolumeMounts({
    helper: idmappedMountHelper(config),
    userNamespace: paths.userns,
    mounts: volumeMounts,
    stageDir: paths.volumes,
  })
  const handover = await openHandover(paths.handover, record)
  const runtime = parts.runtimes.get(record.runtime)
  // A file only where the runtime binds it: its checkpoints look for the bind by the file.
  const bindsBootId = runtime.gaps.ownBootId === undefined
  if (bindsBootId) await writeBootId(paths.bootId, `${randomUUID()}\n`)
  const started = runtime.run({
    id: names.container,
    bundleDir: paths.bundle,
    outputFile: paths.output,
    rootfs: paths.rootfs,
    readonlyBinds: [
      { source: parts.toolbox.dir, destination: parts.toolbox.mountPoint },
      // A build step's apt-get and npm need names resolved; other sandboxes keep the
      // template's own resolver (templates point it at nothing: debian-base.ts).
      ...(record.build === true
        ? [{ source: '/etc/resolv.conf', destination: '/etc/resolv.conf' }]
        : []),
    ],
    volumeBinds,
    netnsPath: netnsPath(names.netns),
    cgroupsPath: names.cgroupPath,
    idMap,
    userNamespacePath: paths.userns,
    // Templates' /etc/hosts name this host, so sudo and friends resolve it.
    hostname: SANDBOX_HOSTNAME,
    resources: { cpuCount: record.cpuCount, memoryMB: record.memoryMB, pids: config.pidsLimit },
    process: {
      args: parts.toolbox.initArgs(ENVD_PORT),
      env: envdEnvironment(record, parts.toolbox),
      cwd: '/',
    },
    initStdin: handover.fd,
    ...(bindsBootId ? { bootIdFile: paths.bootId } : {}),
  })
  // Once `run` settles, the container's init holds its own descriptor of the file and its own
  // binds of the volumes, or failed.
  const initPid = await started.finally(async () => {
    await handover.close()
    await detachStages(paths.volumes)
  })
  return {
    address: createAddressPool(config.addressPool).addresses(record.slot).sandboxAddress,
    initPid,
  }
}

/**
 * envd's handover (its access token and the agent's control secret) in a file that is
 * unlinked before anything is written to it, so only descriptors reach it: the one the
 * container's init inherits as stdin and envd empties once read. Not the environment, which
 * the sandbox's root reads in `/proc/1/environ` for the sandbox's life; not a file in the
 * rootfs or bundle, which would depend on the id mapping and could outlive a failed start.
 */
async function openHandover(file: string, record: SandboxRecord): Promise<FileHandle> {
  const { envdControlSecret, accessToken } = record
  if (envdControlSecret === undefined) {
    throw new Error(`sandbox '${record.sandboxID}' has no envd control secret`)
  }
  const handle = await open(file, 'w+', 0o600)
  try {
    await unlink(file)
    await handle.writeFile(encodeHandover({ controlSecret: envdControlSecret, accessToken }))
    return handle
  } catch (error) {
    await handle.close()
    throw error
  }
}

/**
 * The sandbox's boot ID, bound over the kernel's (oci-spec.ts bootIdMounts): host root's and
 * read-only. Each start writes a new one, as a VM's kernel makes at each boot; a sandbox
 * restored with its memory goes on in the boot it was dumped in (sandbox-checkpoint.ts).
 */
export async function writeBootId(file: string, bootId: string): Promise<void> {
  await writeFile(file, bootId, { mode: 0o444 })
}

/** The sandbox's record directory, with the mount points of its disk, root and bundle. */
async function makeSandboxDir(paths: SandboxPaths, record: SandboxRecord): Promise<void> {
  for (const dir of [paths.disk, paths.rootfs, paths.bundle]) {
    await mkdir(dir, { recursive: true })
  }
  // Host root and this sandbox's root group alone walk in: the runtime reaches the rootfs as
  // the sandbox's root, and no other host user (nor another sandbox's IDs) reaches its files.
  await chown(paths.dir, 0, record.idMap.hostID)
  await chmod(paths.dir, 0o710)
}

/** A new disk's upper layer, work directory and output file. */
async function prepareDisk(paths: SandboxPaths, record: SandboxRecord): Promise<void> {
  const { idMap } = record
  for (const dir of [paths.upper, paths.work]) await mkdir(dir)
  // The init's stdout and stderr: root's, beside the upper layer rather than in it, so the
  // sandbox's IDs cannot open it on the host side and its growth counts against this disk.
  // Append-only (chattr +a's flag): the runtime's chown of its init's stdio to the sandbox's root
  // fails (EPERM, which crun and runc ignore), and no descriptor can rewrite earlier lines.
  await writeFile(paths.output, '', { mode: 0o600, flag: 'wx' })
  setAppendOnly(paths.output, true)
  // The upper layer is the sandbox root's own: root inside is idMap.hostID outside.
  await chown(paths.upper, idMap.hostID, idMap.hostID)
  await chown(paths.work, idMap.hostID, idMap.hostID)
}

/** The overlay root: the sandbox's upper layer over the template's, idmapped through its userns. */
async function mountOverlay(parts: HostParts, paths: SandboxPaths, layers: string[]) {
  await mountIdmappedOverlay({
    helper: idmappedMountHelper(parts.config),
    userNamespace: paths.userns,
    lower: layers,
    upper: paths.upper,
    work: paths.work,
    target: paths.rootfs,
    stageDir: paths.layers,
  })
}

/**
 * Mounts a stopped sandbox's disk and root again where they are gone (a host restart took
 * them), for CRIU to restore its processes into; what is still mounted stays. Its user
 * namespace is made anew for the idmapped layers: the same ID map, a fresh namespace.
 */
export async function remountSandboxRoot(
  parts: HostParts,
  record: SandboxRecord,
  layers: string[],
): Promise<void> {
  const paths = sandboxPaths(parts.records, record.sandboxID)
  if (await isMounted(paths.rootfs)) return
  await unpinNamespace(paths.userns)
  await detachStages(paths.layers)
  await settleAll([
    createUserNamespace({
      helper: userNamespaceHelper(parts.config),
      file: paths.userns,
      owner: ownerOf(parts, record),
      idMap: record.idMap,
    }),
    isMounted(paths.disk).then((mounted) =>
      mounted ? undefined : mountImage(paths.image, paths.disk),
    ),
  ])
  await mountOverlay(parts, paths, layers)
}

/** The host UID that owns the sandbox's user namespace (namespaceOwner). */
export function ownerOf(parts: HostParts, record: SandboxRecord): number {
  const pool = createAddressPool(parts.config.addressPool)
  return namespaceOwner(pool.addresses(record.slot).sandboxAddress)
}

function idmappedMountHelper(config: AgentConfig): string {
  return path.join(config.envdBuildDir, IDMAPPED_MOUNT_HELPER)
}

function userNamespaceHelper(config: AgentConfig): string {
  return path.join(config.envdBuildDir, USER_NAMESPACE_HELPER)
}

/** envd's own environment: what it passes on to user processes, and its toolbox switches. */
function envdEnvironment(record: SandboxRecord, toolbox: Toolbox): Record<string, string> {
  return {
    PATH: DEFAULT_PATH,
    HOME: '/root',
    E2B_SANDBOX_ID: record.sandboxID,
    E2B_TEMPLATE_ID: record.templateID,
    SANDBAR_TOOLBOX: toolbox.mountPoint,
    SANDBAR_PORT_FORWARD: '1',
  }
}

/**
 * Removes a sandbox's host objects in reverse order: what stopSandboxHost removes, then its
 * disk and its directory. Each step tolerates what is already gone, so this also cleans up
 * after a crash at any point.
 */
export async function removeSandboxHost(parts: HostParts, sandboxID: string): Promise<void> {
  await stopSandboxHost(parts, sandboxID)
  const paths = sandboxPaths(parts.records, sandboxID)
  await removeDiskImage({ image: paths.image, mountPoint: paths.disk })
  await parts.records.remove(sandboxID)
}

/**
 * Ends a sandbox's processes and removes what runs it, in reverse order: container (with its
 * processes and cgroups), user namespace, overlay mount and its staged layers and volumes,
 * network. Its disk and record stay: startSandboxHost with `existingDisk` boots it again. The
 * container goes from the runtime its record names, or from every runtime with state when
 * there is no record.
 */
export async function stopSandboxHost(parts: HostParts, sandboxID: string): Promise<void> {
  const names = hostNames(parts.config.prefix, sandboxID)
  const record = await parts.records.read(sandboxID)
  const runtimes = record ? [parts.runtimes.get(record.runtime)] : await parts.runtimes.withState()
  for (const runtime of runtimes) await runtime.remove(names.container)
  // What a runtime without state for it left running (container-cgroups.ts).
  await removeContainerCgroups(names.cgroupPath)
  const paths = sandboxPaths(parts.records, sandboxID)
  await unpinNamespace(paths.userns)
  // Left mounted only by a crash while the runtime started the container (netns-sysfs.ts).
  await unmountNetnsSysfs(netnsSysfsDir(paths.bundle))
  await unmountAll(paths.rootfs)
  await detachStages(paths.layers)
  // Left mounted only by a crash between staging the volumes and the runtime's start.
  await detachStages(paths.volumes)
  await parts.network.teardown(sandboxID)
}
