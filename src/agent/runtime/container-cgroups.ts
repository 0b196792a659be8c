import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { rmdir } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { errnoCode } from '../../errno-code.js'
import { readFileIfExistsSync } from '../path-exists.js'
import { readCgroupMode } from './cgroup-mode.js'

/** How long killed processes may take to leave their cgroup before it is an error. */
const EMPTY_TIMEOUT_MS = 5_000
const POLL_MS = 5

/**
 * Ends whatever still runs in a container's cgroups, then removes them from every hierarchy.
 * A runtime removes what its state names. When that state is gone (removed from the runtime's
 * directory in the agent's data directory), the container's processes run on, unlisted, and
 * hold the sandbox's disk mounted: removing the sandbox failed with EBUSY, and reconcile with
 * it, so the agent did not start. They are the sandbox's own processes: frozen ones are thawed,
 * since a frozen process cannot die, and each is SIGKILLed by PID. Kernel files are read
 * synchronously, as they answer at once; after a runtime's delete (the usual case) this finds
 * nothing to kill and no cgroup left.
 */
export async function removeContainerCgroups(cgroupsPath: string): Promise<void> {
  const mode = await readCgroupMode()
  const dirs = mode.mountPoints
    .map((mountPoint) => join(mountPoint, cgroupsPath))
    .filter((dir) => existsSync(dir))
    .flatMap(subtree)
  if (dirs.some(occupied)) await killAll(dirs, cgroupsPath)
  for (const dir of dirs) {
    await rmdir(dir).catch((error: unknown) => {
      if (errnoCode(error) !== 'ENOENT') throw error
    })
  }
}

async function killAll(dirs: string[], cgroupsPath: string): Promise<void> {
  for (const dir of dirs) thaw(dir)
  const deadline = Date.now() + EMPTY_TIMEOUT_MS
  for (;;) {
    if (!dirs.some(occupied)) return
    const left = new Set(dirs.flatMap(processesIn))
    if (Date.now() > deadline) {
      throw new Error(`processes ${[...left].join(', ')} did not leave cgroup ${cgroupsPath}`)
    }
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // Gone already.
      }
    }
    await sleep(POLL_MS)
  }
}

/**
 * A cgroup and every cgroup below it, the deepest first: the order they can be removed in. On a
 * cgroup v2 host a container's cgroup had children (the cgroup-v2 guest's reconcile test), and
 * while they exist it cannot be removed.
 */
function subtree(dir: string): string[] {
  const children = readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory())
  return [...children.flatMap((child) => subtree(join(dir, child.name))), dir]
}

/**
 * Whether a process is still in the cgroup or below it. cgroup v2 no longer lists a process in
 * `cgroup.procs` once it has begun to exit, yet refuses to remove its cgroup (EBUSY) until it has
 * freed its memory; its `cgroup.events` counts it until then. v1 lists it until then.
 */
function occupied(dir: string): boolean {
  const events = readFileIfExistsSync(join(dir, 'cgroup.events'))
  if (events !== undefined) return /^populated 1$/m.test(events)
  return processesIn(dir).length > 0
}

function processesIn(dir: string): number[] {
  const procs = readFileIfExistsSync(join(dir, 'cgroup.procs')) ?? ''
  return procs.split('\n').filter(Boolean).map(Number)
}

/** v1's freezer or v2's `cgroup.freeze`, whichever this hierarchy's cgroup has. */
function thaw(dir: string): void {
  if (existsSync(join(dir, 'freezer.state'))) writeFileSync(join(dir, 'freezer.state'), 'THAWED')
  if (existsSync(join(dir, 'cgroup.freeze'))) writeFileSync(join(dir, 'cgroup.freeze'), '0')
}
