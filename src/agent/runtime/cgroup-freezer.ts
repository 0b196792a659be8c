import { readFileSync, writeFileSync } from 'node:fs'
import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { readFileIfExistsSync } from '../path-exists.js'
import { readCgroupMode } from './cgroup-mode.js'

/** How long a freeze may take before it is an error: tasks in uninterruptible sleep hold it. */
const FREEZE_TIMEOUT_MS = 5_000
const POLL_MS = 1
/** v1 leaves a freeze at FREEZING when a task was busy; writing FROZEN again retries it. */
const V1_REWRITE_EVERY_POLLS = 10
/** How often an unfinished v1 freeze looks for execs that hold it (see `freezeV1`). */
const V1_EXEC_CHECK_MS = 20
/**
 * Where a thread sleeps while its exec waits for the process's other threads to exit:
 * `de_thread`, which newer kernels inline into `begin_new_exec`.
 */
const EXEC_WAIT_CHANNEL = /^(de_thread|begin_new_exec)$/

/**
 * Freezes and thaws every process of one container's cgroup, and waits until the kernel
 * reports it done. This is what `crun pause` and `runc pause` do, and their `state` reads the
 * same freezer, so it needs no runtime process: a pause or resume is a few writes and reads of
 * cgroup files, made synchronously (kernel files answer at once; the thread pool would add a
 * round trip to each).
 */
export interface CgroupFreezer {
  setFrozen(frozen: boolean): Promise<void>
  /** Whether the cgroup is frozen, or on its way there; throws when the cgroup is gone. */
  isFrozen(): boolean
}

/** The freezer of the cgroup at `cgroupsPath` (an OCI `cgroupsPath`), on this host's cgroups. */
export async function cgroupFreezer(cgroupsPath: string): Promise<CgroupFreezer> {
  const mode = await readCgroupMode()
  if (mode.kind === 'v2') {
    const dir = join(mode.mountPoints[0] ?? '/sys/fs/cgroup', cgroupsPath)
    const write = (frozen: boolean) => writeFileSync(join(dir, 'cgroup.freeze'), frozen ? '1' : '0')
    const isDone = (frozen: boolean) =>
      readFileSync(join(dir, 'cgroup.events'), 'utf8').includes(`frozen ${frozen ? 1 : 0}`)
    return {
      async setFrozen(frozen) {
        write(frozen)
        if (await pollUntil(FREEZE_TIMEOUT_MS, () => isDone(frozen))) return
        // A failed pause leaves the sandbox running, not half frozen.
        if (frozen) write(false)
        throw notDoneError(cgroupsPath, frozen)
      },
      isFrozen: () => readFileSync(join(dir, 'cgroup.freeze'), 'utf8').trim() === '1',
    }
  }
  const dir = await v1FreezerDir(mode.mountPoints, cgroupsPath)
  const state = join(dir, 'freezer.state')
  return {
    async setFrozen(frozen) {
      if (frozen ? await freezeV1(dir) : await thawV1(state)) return
      throw notDoneError(cgroupsPath, frozen)
    },
    isFrozen: () => v1State(state) !== 'THAWED',
  }
}

/**
 * Freezes a v1 cgroup. v1 can stay FREEZING for good: a process that execs while it has
 * threads waits in the kernel for them to exit, and a thread frozen first never does. So an
 * unfinished freeze looks for such execs; when it finds some, it thaws the cgroup until they
 * are through and freezes again. Any other slow freeze (tasks short of CPU on a busy host)
 * keeps the progress it made. A freeze not done by the deadline is undone: a failed pause
 * leaves the sandbox running, not half frozen.
 */
async function freezeV1(dir: string): Promise<boolean> {
  const state = join(dir, 'freezer.state')
  const deadline = Date.now() + FREEZE_TIMEOUT_MS
  while (Date.now() < deadline) {
    writeFileSync(state, 'FROZEN')
    let polls = 0
    const frozen = await pollUntil(Math.min(V1_EXEC_CHECK_MS, deadline - Date.now()), () => {
      if (v1State(state) === 'FROZEN') return true
      if (++polls % V1_REWRITE_EVERY_POLLS === 0) writeFileSync(state, 'FROZEN')
      return false
    })
    if (frozen) return true
    const execs = threadsInExec(dir)
    if (execs.length > 0) {
      writeFileSync(state, 'THAWED')
      await pollUntil(deadline - Date.now(), () => !execs.some(isInExec))
    }
  }
  writeFileSync(state, 'THAWED')
  return false
}

/** The cgroup's threads whose exec waits for the other threads of their process. */
function threadsInExec(dir: string): string[] {
  const tids = readFileSync(join(dir, 'tasks'), 'utf8').split('\n').filter(Boolean)
  return tids.filter(isInExec)
}

/**
 * Whether a thread sleeps in exec's wait, by its wait channel. A kernel that hides wait
 * channels reports `0`: there a held freeze runs to its deadline and fails, leaving the sandbox
 * running.
 */
function isInExec(tid: string): boolean {
  const channel = readFileIfExistsSync(`/proc/${tid}/wchan`)
  return channel !== undefined && EXEC_WAIT_CHANNEL.test(channel)
}

async function thawV1(state: string): Promise<boolean> {
  writeFileSync(state, 'THAWED')
  return pollUntil(FREEZE_TIMEOUT_MS, () => v1State(state) === 'THAWED')
}

/** What a v1 `freezer.state` reports: THAWED, FREEZING or FROZEN. */
function v1State(state: string): string {
  return readFileSync(state, 'utf8').trim()
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

/** Polls `done` until it holds (true) or `timeoutMs` passes (false). */
async function pollUntil(timeoutMs: number, done: () => boolean): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() >= deadline) return false
    await sleep(POLL_MS)
  }
  return true
}

function notDoneError(cgroupsPath: string, frozen: boolean): Error {
  const wanted = frozen ? 'frozen' : 'thawed'
  return new Error(`cgroup ${cgroupsPath} not ${wanted} after ${FREEZE_TIMEOUT_MS} ms`)
}
