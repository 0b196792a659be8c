import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { runHostCommand } from './host-command.js'
import { parseIPv4 } from './network/ipv4.js'
import { unmountAll } from './rootfs/unmount.js'

/**
 * First host UID that owns sandbox user namespaces: owners are `OWNER_BASE + (address >> 2)`,
 * one per /30 sandbox network, so they are as distinct as sandbox addresses (agents on one
 * host have disjoint pools), far above Debian's subordinate ranges (100000 + 65536·n) and
 * outside every sandbox's ID map. No process and no file ever has these IDs.
 */
export const OWNER_BASE = 0xc000_0000

/**
 * First host ID of the sandboxes' ID ranges: from 2^31 up to OWNER_BASE, 16,384 ranges of
 * ID_MAP_SIZE, one per /30 network of a /16 pool. Far above what useradd hands out as
 * subordinate IDs (login.defs: 100000…600100000); the agent refuses to start when /etc/subuid
 * or /etc/subgid grants any of these anyway (subordinate-ids.ts).
 */
export const SANDBOX_IDS_BASE = 0x8000_0000

/** IDs per sandbox: container IDs 0…65535 (root to nobody) map to a host range this size. */
export const ID_MAP_SIZE = 65_536

/** Sandbox ranges between SANDBOX_IDS_BASE and OWNER_BASE: the /30 networks of one /16. */
export const ID_RANGES = (OWNER_BASE - SANDBOX_IDS_BASE) / ID_MAP_SIZE

/**
 * The host UID that owns the user namespace of the sandbox at `sandboxAddress`. The kernel
 * charges inotify instances and watches (and other per-user counts) made inside a user
 * namespace to its owner as well, up to the host's per-user limits (measured on 6.18: with
 * crun's namespaces, owned by root, one sandbox's user took all 128 instances of the host's
 * root). An owner per sandbox makes those limits per sandbox.
 */
export function namespaceOwner(sandboxAddress: string): number {
  return OWNER_BASE + networkIndex(sandboxAddress)
}

/** A sandbox's ID mapping: its IDs 0…size-1 are the host IDs hostID…hostID+size-1. */
export interface IDMap {
  hostID: number
  size: number
}

/**
 * The host IDs root and every other user inside the sandbox at `sandboxAddress` are: a range
 * no other sandbox of a /16 pool has (the agent refuses wider pools), so one sandbox's IDs own
 * nothing of another's on the host, and no host user's subordinate IDs reach its files.
 */
export function sandboxIDMap(sandboxAddress: string): IDMap {
  const range = networkIndex(sandboxAddress) % ID_RANGES
  return { hostID: SANDBOX_IDS_BASE + range * ID_MAP_SIZE, size: ID_MAP_SIZE }
}

/** The number of the /30 network holding `sandboxAddress`, counted from 0.0.0.0. */
function networkIndex(sandboxAddress: string): number {
  const address = parseIPv4(sandboxAddress)
  if (address === undefined) throw new RangeError(`not an IPv4 address: ${sandboxAddress}`)
  return Math.floor(address / 4)
}

export interface UserNamespaceSpec {
  /** Path of the user-namespace binary (USER_NAMESPACE_HELPER in the build directory). */
  helper: string
  /** A file that keeps the namespace alive (bind mount of its nsfs file), joined by the runtime. */
  file: string
  owner: number
  idMap: IDMap
  /**
   * Also a network namespace, owned by this user namespace and pinned at this file (the
   * sandbox's `/run/netns/<name>`). CRIU checkpoints a process tree only when every namespace
   * it is in belongs to its user namespace; one the host's user namespace owns cannot be.
   */
  netnsFile?: string
}

/**
 * The helper that makes a sandbox's namespaces (user-namespace.c), compiled by
 * scripts/build.mjs into the build directory beside the bundles.
 */
export const USER_NAMESPACE_HELPER = 'user-namespace'

/**
 * Makes the sandbox's user namespace owned by `owner`: the helper's child, running as `owner`
 * (no capabilities, no groups), unshares one (and with `netnsFile` a network namespace inside
 * it, in the same call); the helper writes its ID maps (a privileged writer may map any range
 * and leaves setgroups allowed, which sudo inside needs) and pins them with bind mounts.
 */
export async function createUserNamespace(spec: UserNamespaceSpec): Promise<void> {
  const pins = spec.netnsFile === undefined ? [spec.file] : [spec.file, spec.netnsFile]
  await Promise.all(pins.map(createPinFile))
  const { owner, idMap } = spec
  await runHostCommand(spec.helper, [
    ...[String(owner), String(idMap.hostID), String(idMap.size)],
    ...pins,
  ])
}

/** An empty file for a namespace to be bound on; one already there is refused. */
async function createPinFile(file: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(file, '', { flag: 'wx', mode: 0o600 })
}

/** Keeps namespace `kind` of `pid` alive after it exits: a bind mount of its nsfs file. */
export async function pinNamespace(pid: number, kind: 'user' | 'net', file: string): Promise<void> {
  await createPinFile(file)
  await runHostCommand('mount', ['--bind', `/proc/${pid}/ns/${kind}`, file])
}

/**
 * Unpins the namespace bound on `file` (it ends with the last process in it, as the kernel
 * frees it once nothing holds it) and removes the file: what `ip netns delete` does for a netns.
 */
export async function unpinNamespace(file: string): Promise<void> {
  await unmountAll(file)
  await rm(file, { force: true })
}
