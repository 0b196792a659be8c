import { totalmem } from 'node:os'
import { createAddressPool } from '../network/address-pool.js'
import { SANDBOX_NOFILE } from '../runtime/oci-spec.js'
import { type HostLimits, readHostLimits } from './host-limits.js'
import { pidsBudget } from './parent-cgroup.js'

/**
 * Memory the host keeps for itself (the service, the runtimes, the kernel, the page cache):
 * this many MiB or a tenth of its memory, whichever is more, as HOST_PID_RESERVE does for PIDs.
 */
export const HOST_MEMORY_RESERVE_MB = 1024

/** What one sandbox may take at most: its template's memory limit and its pids limit. */
export interface SandboxShare {
  memoryMB: number
  pidsLimit: number
}

/** What the host has, as the derivation reads it. */
export interface HostResources {
  limits: HostLimits
  /** Physical memory, in MiB. */
  memoryMB: number
  /** The address pool, and how many /30 networks (one per sandbox, paused ones too) it holds. */
  addressPool: { cidr: string; slots: number }
}

/** How many sandboxes each of the host's resources holds, every sandbox at its limits. */
export interface SandboxCapacity {
  memory: number
  pids: number
  openFiles: number
  addressPool: number
}

/** The limit `sandbar serve` runs with, and one line for its start output saying why. */
export interface MaxSandboxesChoice {
  maxSandboxes: number
  summary: string
}

/**
 * How many sandboxes fit on the host when every one uses all it may: its whole memory limit
 * (memory limits are hard and sandboxes have no swap), its whole pids limit within the agent's
 * pids budget (parent-cgroup.ts), one process at its open-file limit within `fs.file-max` (the
 * check host-limits.ts makes), and one /30 of the address pool. CPU does not count: sandboxes
 * share it by weight, so more of them only run slower.
 */
export function sandboxCapacity(host: HostResources, share: SandboxShare): SandboxCapacity {
  const pids = pidsBudget(host.limits.pidMax, host.limits.threadsMax)
  const atLeastZero = (n: number) => Math.max(0, Math.floor(n))
  return {
    memory: atLeastZero((host.memoryMB - memoryReserveMB(host.memoryMB)) / share.memoryMB),
    pids: atLeastZero(pids / share.pidsLimit),
    openFiles: atLeastZero(host.limits.fileMax / SANDBOX_NOFILE),
    addressPool: host.addressPool.slots,
  }
}

/**
 * The concurrency limit: `--max-sandboxes` when given, else the least the host's resources hold
 * (never below one, so a small host still runs a sandbox), with the line that says so.
 */
export function chooseMaxSandboxes(
  flag: number | undefined,
  host: HostResources,
  share: SandboxShare,
): MaxSandboxesChoice {
  const capacity = sandboxCapacity(host, share)
  const held = Math.max(1, Math.min(...Object.values(capacity)))
  const reserve = memoryReserveMB(host.memoryMB)
  const budget = pidsBudget(host.limits.pidMax, host.limits.threadsMax)
  const reasons = {
    memory: `memory (${share.memoryMB} MiB each of ${gib(host.memoryMB - reserve)} GiB, ${gib(reserve)} GiB kept for the host)`,
    pids: `pids (${share.pidsLimit} each of a budget of ${budget})`,
    openFiles: `open files (${SANDBOX_NOFILE} each of fs.file-max ${host.limits.fileMax})`,
    addressPool: `the address pool (one /30 each of ${host.addressPool.cidr})`,
  } satisfies Record<keyof SandboxCapacity, string>
  const each = (Object.keys(capacity) as (keyof SandboxCapacity)[])
    .sort((a, b) => capacity[a] - capacity[b])
    .map((bound) => `${capacity[bound]} by ${reasons[bound]}`)
    .join(', ')
  if (flag !== undefined) {
    return {
      maxSandboxes: flag,
      summary: `Up to ${flag} sandboxes at once, as --max-sandboxes says; with every sandbox at its limits this host holds ${held}: ${each}.`,
    }
  }
  return {
    maxSandboxes: held,
    summary: `Up to ${held} sandboxes at once, the most this host holds with every sandbox at its limits: ${each}. Set another limit with --max-sandboxes N.`,
  }
}

/** The host's resources as `sandbar serve` starts: kernel limits, memory, the address pool. */
export async function readHostResources(addressPool: string): Promise<HostResources> {
  const pool = createAddressPool(addressPool)
  return {
    limits: await readHostLimits(),
    memoryMB: Math.floor(totalmem() / 2 ** 20),
    addressPool: { cidr: pool.cidr, slots: pool.capacity },
  }
}

function memoryReserveMB(memoryMB: number): number {
  return Math.max(HOST_MEMORY_RESERVE_MB, Math.ceil(memoryMB / 10))
}

function gib(mb: number): string {
  return (mb / 1024).toFixed(1)
}
