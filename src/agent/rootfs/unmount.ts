import { setTimeout as sleep } from 'node:timers/promises'
import { errnoCode } from '../../errno-code.js'
import { unmount } from './mount-calls.js'

/** How long an unmount may stay busy before the error stands. */
const BUSY_FOR_MS = 3_000
const BUSY_POLL_MS = 50

/**
 * Unmounts everything stacked at `target`; not mounted is fine. Right after `crun delete -f` a
 * sandbox's processes may still be exiting (seen under load: `target is busy` on its disk), so
 * a failed unmount is tried again for a while. No lazy (`-l`) fallback: a mount that stays
 * busy means a process of the sandbox still runs, and hiding that would leak it.
 */
export async function unmountAll(target: string): Promise<void> {
  const deadline = Date.now() + BUSY_FOR_MS
  for (;;) {
    try {
      await unmount(target)
    } catch (error) {
      const code = errnoCode(error)
      // EINVAL: nothing (more) is mounted there; ENOENT: nor is there anything to mount on.
      if (code === 'EINVAL' || code === 'ENOENT') return
      if (code !== 'EBUSY' || Date.now() > deadline) throw error
      await sleep(BUSY_POLL_MS)
    }
  }
}
