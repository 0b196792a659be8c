import { mkdir, readlink, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { spawnProcess } from '../spawn/process-spawn.js'
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

/** How long the helper that makes the namespace may take to enter it. */
const ENTER_TIMEOUT_MS = 5_000
const ENTER_POLL_MS = 2

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
 * Makes the sandbox's user namespace owned by `owner`: a helper running as `owner` (no
 * capabilities, no groups) unshares one (and with `netnsFile` a network namespace inside it,
 * in the same call), the agent writes its ID maps (a privileged writer may map any range and
 * leaves setgroups allowed, which sudo inside needs) and pins them with bind mounts; the helper
 * is then killed.
 */
export async function createUserNamespace(spec: UserNamespaceSpec): Promise<void> {
  const owner = String(spec.owner)
  const unshare = spec.netnsFile === undefined ? ['--user'] : ['--user', '--net']
  const helper = spawnProcess(
    'setpriv',
    ['--reuid', owner, '--regid', owner, '--clear-groups', 'unshare', ...unshare, 'sleep', '60'],
    { env: process.env, stdio: ['ignore', 'ignore', 'ignore'] },
  )
  const { pid } = helper
  try {
    await enteredNewNamespace(pid)
    const map = `0 ${spec.idMap.hostID} ${spec.idMap.size}\n`
    await writeFile(`/proc/${pid}/uid_map`, map)
    await writeFile(`/proc/${pid}/gid_map`, map)
    await Promise.all([
      pinNamespace(pid, 'user', spec.file),
      spec.netnsFile === undefined ? undefined : pinNamespace(pid, 'net', spec.netnsFile),
    ])
  } finally {
    helper.kill('SIGKILL')
    await helper.exited
  }
}

/** Keeps namespace `kind` of `pid` alive after it exits: a bind mount of its nsfs file. */
export async function pinNamespace(pid: number, kind: 'user' | 'net', file: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(file, '', { flag: 'wx', mode: 0o600 })
  await runHostCommand('mount', ['--bind', `/proc/${pid}/ns/${kind}`, file])
}

/** Waits until `pid` runs in a user namespace other than the agent's own. */
async function enteredNewNamespace(pid: number): Promise<void> {
  const own = await readlink('/proc/self/ns/user')
  const deadline = Date.now() + ENTER_TIMEOUT_MS
  for (;;) {
    const current = await readlink(`/proc/${pid}/ns/user`).catch(() => own)
    if (current !== own) return
    if (Date.now() > deadline) throw new Error('the user namespace helper did not unshare')
    await sleep(ENTER_POLL_MS)
  }
}

/** Unpins the namespace (it ends with the sandbox's last process) and removes the file. */
export async function removeUserNamespace(file: string): Promise<void> {
  await unmountAll(file)
  await rm(file, { force: true })
}
