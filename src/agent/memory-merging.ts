import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from '../logger.js'
import { runHostCommand } from './host-command.js'
import type { Toolbox } from './rootfs/rootfs.js'

/** The kernel's same-page merging (host-facts: built in, off by default). */
const KSM_DIR = '/sys/kernel/mm/ksm'

/** ADDR_NO_RANDOMIZE in /proc/<pid>/personality, which share-memory sets once the merge took. */
const ADDR_NO_RANDOMIZE = 0x40000

/**
 * KSM's settings under `serve --share-envd-memory`. Only envd's memory is marked mergeable
 * (share-memory.c), so ksmd scans nothing else of the host: 10,000 pages a second, which took
 * 1-9% of a core with 60 idle sandboxes (~3,500 pages each), and goes over 1,000 sandboxes'
 * envds in six minutes. The kernel's advisor (`scan-time`) scanned 25,000 pages a second or
 * more at any count, 7-24% of a core, whatever its CPU cap said.
 */
const PAGES_PER_SCAN = 1000
const SCAN_INTERVAL_MS = 100
const KSM_SETTINGS: [file: string, value: string][] = [
  ['pages_to_scan', String(PAGES_PER_SCAN)],
  ['sleep_millisecs', String(SCAN_INTERVAL_MS)],
  ['run', '1'],
]

/**
 * Checks that this kernel takes what envd's launcher asks (PR_SET_MEMORY_MERGE, Linux ≥ 6.4)
 * and starts ksmd. The settings outlive serve, as its sandboxes do.
 */
export async function startMemoryMerging(toolbox: Toolbox, logger: Logger): Promise<void> {
  const launcher = path.join(toolbox.dir, 'envd', 'share-memory')
  const personality = await runHostCommand(launcher, ['cat', '/proc/self/personality'])
  if ((Number.parseInt(personality, 16) & ADDR_NO_RANDOMIZE) === 0) {
    throw new Error(
      '--share-envd-memory needs Linux 6.4 or later (PR_SET_MEMORY_MERGE); start serve without it',
    )
  }
  for (const [file, value] of KSM_SETTINGS) {
    await writeFile(path.join(KSM_DIR, file), value).catch((error: unknown) => {
      throw new Error(
        `--share-envd-memory needs the kernel's KSM (${KSM_DIR}/${file}): ${String(error)}`,
      )
    })
  }
  logger.info(
    { pagesPerSecond: (PAGES_PER_SCAN * 1000) / SCAN_INTERVAL_MS },
    "envd's memory is shared across sandboxes: ksmd merges its identical pages",
  )
}
