import { access, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { readCgroupMode } from './cgroup-mode.js'

/** How long a freeze may take before it is an error: tasks in uninterruptible sleep hold it. */
const FREEZE_TIMEOUT_MS = 5_000
const POLL_MS = 1
/** v1 leaves a freeze at FREEZING when a task was busy; writing FROZEN again retries it. */
const V1_REWRITE_EVERY_POLLS = 10

/**
 * Freezes or thaws every process of the cgroup at `cgroupsPath` (an OCI `cgroupsPath`), and
 * waits until the kernel reports it done. This is what `crun pause` and `runc pause` do, and
 * their `state` reads the same freezer, so it needs no runtime process: a pause or resume is
 * a few file writes instead of a spawn.
 */
export async function setFrozen(cgroupsPath: string, frozen: boolean): Promise<void> {
  const mode = await readCgroupMode()
  if (mode.kind === 'v2') {
    const dir = join(mode.mountPoints[0] ?? '/sys/fs/cgroup', cgroupsPath)
    await writeFile(join(dir, 'cgroup.freeze'), frozen ? '1' : '0')
    await pollUntil(cgroupsPath, frozen, async () => {
      const events = await readFile(join(dir, 'cgroup.events'), 'utf8')
      return events.includes(`frozen ${frozen ? 1 : 0}`)
    })
    return
  }
  const state = join(await v1FreezerDir(mode.mountPoints, cgroupsPath), 'freezer.state')
  const wanted = frozen ? 'FROZEN' : 'THAWED'
  await writeFile(state, wanted)
  let polls = 0
  await pollUntil(cgroupsPath, frozen, async () => {
    if ((await readFile(state, 'utf8')).trim() === wanted) return true
    if (++polls % V1_REWRITE_EVERY_POLLS === 0) await writeFile(state, wanted)
    return false
  })
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

async function pollUntil(
  cgroupsPath: string,
  frozen: boolean,
  done: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + FREEZE_TIMEOUT_MS
  while (!(await done())) {
    if (Date.now() > deadline) {
      throw new Error(
        `cgroup ${cgroupsPath} not ${frozen ? 'frozen' : 'thawed'} after ${FREEZE_TIMEOUT_MS} ms`,
      )
    }
    await sleep(POLL_MS)
  }
}
