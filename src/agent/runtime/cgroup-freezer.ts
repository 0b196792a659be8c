import { readFileSync, writeFileSync } from 'node:fs'
import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { readCgroupMode } from './cgroup-mode.js'

/** How long a freeze may take before it is an error: tasks in uninterruptible sleep hold it. */
const FREEZE_TIMEOUT_MS = 5_000
const POLL_MS = 1
/** v1 leaves a freeze at FREEZING when a task was busy; writing FROZEN again retries it. */
const V1_REWRITE_EVERY_POLLS = 10

/**
 * Freezes and thaws every process of one container's cgroup, and waits until the kernel
 * reports it done. This is what `crun pause` and `runc pause` do, and their `state` reads the
 * same freezer, so it needs no runtime process: a pause or resume is a few writes and reads of
 * cgroup files, made synchronously (kernel files answer at once; the thread pool would add a
 * round trip to each).
 */
export interface CgroupFreezer {
  setFrozen(frozen: boolean): Promise<void>
}

/** The freezer of the cgroup at `cgroupsPath` (an OCI `cgroupsPath`), on this host's cgroups. */
export async function cgroupFreezer(cgroupsPath: string): Promise<CgroupFreezer> {
  const mode = await readCgroupMode()
  if (mode.kind === 'v2') {
    const dir = join(mode.mountPoints[0] ?? '/sys/fs/cgroup', cgroupsPath)
    return {
      async setFrozen(frozen) {
        writeFileSync(join(dir, 'cgroup.freeze'), frozen ? '1' : '0')
        const done = `frozen ${frozen ? 1 : 0}`
        await pollUntil(cgroupsPath, frozen, () =>
          readFileSync(join(dir, 'cgroup.events'), 'utf8').includes(done),
        )
      },
    }
  }
  const state = join(await v1FreezerDir(mode.mountPoints, cgroupsPath), 'freezer.state')
  return {
    async setFrozen(frozen) {
      const wanted = frozen ? 'FROZEN' : 'THAWED'
      writeFileSync(state, wanted)
      let polls = 0
      await pollUntil(cgroupsPath, frozen, () => {
        if (readFileSync(state, 'utf8').trim() === wanted) return true
        if (++polls % V1_REWRITE_EVERY_POLLS === 0) writeFileSync(state, wanted)
        return false
      })
    },
  }
}

/** The directory of the cgroup at `cgroupsPath` that holds its freezer (v1 or v2). */
export async function freezerCgroupDir(cgroupsPath: string): Promise<string> {
  const mode = await readCgroupMode()
  return mode.kind === 'v2'
    ? join(mode.mountPoints[0] ?? '/sys/fs/cgroup', cgroupsPath)
    : v1FreezerDir(mode.mountPoints, cgroupsPath)
}

/** The container's directory in the v1 freezer hierarchy, wherever the host mounts it. */
async function v1FreezerDir(mountPoints: string[], cgroupsPath: string): Promise<string> {
  for (const mountPoint of mountPoints) {
    const dir = join(mountPoint, cgroupsPath)
    try {
      await access(join(dir, 'freezer.state'))
      return dir
    } catch {
      // Another controller's hierarchy.
    }
  }
  throw new Error(`no freezer cgroup at ${cgroupsPath}`)
}

async function pollUntil(cgroupsPath: string, frozen: boolean, done: () => boolean): Promise<void> {
  const deadline = Date.now() + FREEZE_TIMEOUT_MS
  while (!done()) {
    if (Date.now() > deadline) {
      throw new Error(
        `cgroup ${cgroupsPath} not ${frozen ? 'frozen' : 'thawed'} after ${FREEZE_TIMEOUT_MS} ms`,
      )
    }
    await sleep(POLL_MS)
  }
}
