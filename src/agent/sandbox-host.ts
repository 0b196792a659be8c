import { chown, type FileHandle, mkdir, open, unlink } from 'node:fs/promises'
import path from 'node:path'
import { ENVD_PORT, encodeHandover } from '../envd/index.js'
import { hostNames } from './host-names.js'
import type { AgentConfig } from './index.js'
import type { NetworkManager, SandboxNetwork } from './network/network.js'
import { BASE_HOSTNAME } from './rootfs/base-template.js'
import { mountOverlay, unmountOverlay } from './rootfs/overlay.js'
import type { TemplateLayers, Toolbox } from './rootfs/rootfs.js'
import type { RuntimeSet } from './runtime/runtime-set.js'
import type { SandboxRecord, SandboxRecords } from './sandbox-record.js'

/** The agent's parts that build and remove a sandbox's host objects. */
export interface HostParts {
  config: AgentConfig
  runtimes: RuntimeSet
  network: NetworkManager
  toolbox: Toolbox
  records: SandboxRecords
}

/** Where one sandbox's files live under its record directory. */
export function sandboxPaths(records: SandboxRecords, sandboxID: string) {
  const dir = records.dir(sandboxID)
  return {
    upper: path.join(dir, 'upper'),
    work: path.join(dir, 'work'),
    rootfs: path.join(dir, 'rootfs'),
    bundle: path.join(dir, 'bundle'),
    output: path.join(dir, 'output.log'),
    handover: path.join(dir, 'handover'),
  }
}

/**
 * Builds a sandbox's host objects in dependency order: network, overlay root, container.
 * The caller removes whatever exists if this throws.
 */
export async function startSandboxHost(
  parts: HostParts,
  record: SandboxRecord,
  layers: TemplateLayers,
): Promise<SandboxNetwork> {
  const { config } = parts
  const names = hostNames(config.prefix, record.sandboxID)
  const paths = sandboxPaths(parts.records, record.sandboxID)
  // Network and root filesystem do not depend on each other. Both settle before this returns
  // or throws, so the caller's cleanup never races a half-finished step.
  const [network, rootfs] = await Promise.allSettled([
    parts.network.setup(record.sandboxID, record.slot, record.egress),
    mountRootfs(paths, layers, config.idShift),
  ])
  if (network.status === 'rejected') throw network.reason
  if (rootfs.status === 'rejected') throw rootfs.reason
  const handover = await openHandover(paths.handover, record)
  const started = parts.runtimes.get(record.runtime).run({
    id: names.container,
    bundleDir: paths.bundle,
    outputFile: paths.output,
    rootfs: paths.rootfs,
    readonlyBinds: [{ source: parts.toolbox.dir, destination: parts.toolbox.mountPoint }],
    netnsPath: network.value.netnsPath,
    cgroupsPath: names.cgroupPath,
    idMap: { hostID: config.idShift, size: 65536 },
    // The base template's /etc/hosts names this host, so sudo and friends resolve it.
    hostname: BASE_HOSTNAME,
    resources: { cpuCount: record.cpuCount, memoryMB: record.memoryMB, pids: config.pidsLimit },
    process: {
      args: parts.toolbox.initArgs(ENVD_PORT),
      env: envdEnvironment(record, parts.toolbox),
      cwd: '/',
    },
    initStdin: handover.fd,
  })
  // Once `run` settles, the container's init holds its own descriptor of the file, or failed.
  await started.finally(() => handover.close())
  return network.value
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

/** The sandbox's overlay root: its own upper layer over the template's layers. */
async function mountRootfs(
  paths: ReturnType<typeof sandboxPaths>,
  layers: TemplateLayers,
  idShift: number,
): Promise<void> {
  for (const dir of [paths.upper, paths.work, paths.rootfs, paths.bundle]) {
    await mkdir(dir, { recursive: true })
  }
  // The upper layer is the sandbox root's own: root inside is idShift outside.
  await chown(paths.upper, idShift, idShift)
  await chown(paths.work, idShift, idShift)
  await mountOverlay({
    lower: layers.layers,
    upper: paths.upper,
    work: paths.work,
    target: paths.rootfs,
  })
}

/** envd's own environment: what it passes on to user processes, and its toolbox switches. */
function envdEnvironment(record: SandboxRecord, toolbox: Toolbox): Record<string, string> {
  return {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: '/root',
    E2B_SANDBOX_ID: record.sandboxID,
    E2B_TEMPLATE_ID: record.templateID,
    SANDBAR_TOOLBOX: toolbox.mountPoint,
    SANDBAR_PORT_FORWARD: '1',
  }
}

/**
 * Removes a sandbox's host objects in reverse order: container (with its processes and
 * cgroups), overlay mount, network, then its directory. Each step tolerates what is already
 * gone, so this also cleans up after a crash at any point. The container goes from the
 * runtime its record names, or from every runtime with state when there is no record.
 */
export async function removeSandboxHost(parts: HostParts, sandboxID: string): Promise<void> {
  const names = hostNames(parts.config.prefix, sandboxID)
  const record = await parts.records.read(sandboxID)
  const runtimes = record ? [parts.runtimes.get(record.runtime)] : await parts.runtimes.withState()
  for (const runtime of runtimes) await runtime.remove(names.container)
  await unmountOverlay(sandboxPaths(parts.records, sandboxID).rootfs)
  await parts.network.teardown(sandboxID)
  await parts.records.remove(sandboxID)
}
