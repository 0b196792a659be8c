import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { GuestRun } from './guest-vm.js'

// This machine's cgroups are hybrid (host-facts), most users' are pure v2. The agent tests
// that touch cgroups run again in a guest whose only cgroup file system is cgroup2 at
// /sys/fs/cgroup: limits, OOM, pids, pause and resume, kill, reconcile and their leak checks,
// on each runtime.
export const INNER_TESTS = [
  'test/agent/runtime.test.ts',
  'test/agent/sandbox-lifecycle.test.ts',
  'test/agent/reconcile.test.ts',
]

/**
 * Vitest's `-t` pattern over those files' test names: the cases whose outcome depends on the
 * cgroup hierarchy, after a sandbox's first commands (emulated, envd's first command takes
 * seconds, longer than the fork bomb case allows). The rest (seccomp, files, network devices,
 * ID maps) behave alike on any cgroup mode and cost minutes under emulation. No spaces or
 * commas: it rides on the kernel command line.
 */
export const INNER_TEST_NAMES =
  'runs.commands.through.envd|cgroup|limits|pause.stops|remove|pids|fork.bomb|OOM|lists.what.runs|reconcile|adopts'

/** Written into the guest's work directory by global-setup.ts once the guest has ended. */
export const GUEST_RUN_FILE = 'guest-run.json'

/** How the guest ended: its run, or why it never booted. */
export type GuestOutcome = { run: GuestRun } | { failure: string }

/** Waits for the guest that global-setup.ts started to end, and reads how. */
export async function guestOutcome(workDir: string): Promise<GuestOutcome> {
  const file = path.join(workDir, GUEST_RUN_FILE)
  for (;;) {
    const text = await readFile(file, 'utf8').catch(() => undefined)
    if (text !== undefined) return JSON.parse(text) as GuestOutcome
    await sleep(1000)
  }
}
