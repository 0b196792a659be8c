import { readFile } from 'node:fs/promises'
import type { Logger } from '../../logger.js'
import { runHostCommand } from '../host-command.js'
import { SANDBOX_NOFILE } from '../runtime/oci-spec.js'
import { pidsBudget } from './parent-cgroup.js'

/** The host's kernel limits that bound what all sandboxes together can take. */
export interface HostLimits {
  /** `fs.nr_open`: the highest RLIMIT_NOFILE a process may have. */
  nrOpen: number
  /** `fs.file-max`: open files on the whole host. */
  fileMax: number
  pidMax: number
  threadsMax: number
}

export async function readHostLimits(): Promise<HostLimits> {
  const read = async (name: string) => Number(await readFile(`/proc/sys/${name}`, 'utf8'))
  return {
    nrOpen: await read('fs/nr_open'),
    fileMax: await read('fs/file-max'),
    pidMax: await read('kernel/pid_max'),
    threadsMax: await read('kernel/threads-max'),
  }
}

/**
 * Checks the host's limits against the sandboxes' at agent start. A RLIMIT_NOFILE above
 * `fs.nr_open` makes every create fail, so that stops the start; the rest is reported, never
 * raised behind the operator's back: a file table smaller than `maxSandboxes` processes at their
 * NOFILE limit, or per-sandbox pids limits that together exceed the agent's pids budget (the
 * budget then holds first, and the host keeps its reserve either way).
 */
export function checkHostLimits(
  host: HostLimits,
  sandboxes: { maxSandboxes?: number; pidsLimit: number },
  logger: Logger,
): void {
  if (host.nrOpen < SANDBOX_NOFILE) {
    throw new Error(
      `fs.nr_open is ${host.nrOpen}, below the sandboxes' RLIMIT_NOFILE ${SANDBOX_NOFILE}: raise it (sysctl -w fs.nr_open=${SANDBOX_NOFILE})`,
    )
  }
  const { maxSandboxes } = sandboxes
  if (maxSandboxes === undefined) return
  if (host.fileMax < maxSandboxes * SANDBOX_NOFILE) {
    logger.warn(
      { fileMax: host.fileMax, maxSandboxes, nofile: SANDBOX_NOFILE },
      'fs.file-max is smaller than one process per sandbox at its open-file limit',
    )
  }
  const budget = pidsBudget(host.pidMax, host.threadsMax)
  if (budget < maxSandboxes * sandboxes.pidsLimit) {
    logger.info(
      { pidsBudget: budget, maxSandboxes, pidsLimit: sandboxes.pidsLimit },
      'sandboxes together meet the pids budget before each meets its own limit',
    )
  }
}

/**
 * Makes sure the agent's own hard RLIMIT_NOFILE is at least the sandboxes': the runtime
 * inherits it and sets the sandbox's limit inside the sandbox's user namespace, where raising a
 * hard limit is refused, so every create would fail with "setrlimit `RLIMIT_NOFILE`: Operation
 * not permitted". A lower one is raised (the soft limit stays) when the agent holds
 * CAP_SYS_RESOURCE; otherwise the start stops with what to change.
 */
export async function ensureOwnNofile(logger: Logger): Promise<void> {
  const limits = await readFile('/proc/self/limits', 'utf8')
  const match = /^Max open files\s+(\d+)\s+(\d+)/m.exec(limits)
  const [soft, hard] = [Number(match?.[1]), Number(match?.[2])]
  if (hard >= SANDBOX_NOFILE) return
  await runHostCommand('prlimit', [
    `--pid=${process.pid}`,
    `--nofile=${soft}:${SANDBOX_NOFILE}`,
  ]).catch(() => {
    throw new Error(
      `the service's hard RLIMIT_NOFILE is ${hard}, below the sandboxes' ${SANDBOX_NOFILE}, and cannot be raised: start it with a higher one (ulimit -Hn, LimitNOFILE=)`,
    )
  })
  logger.info({ from: hard, to: SANDBOX_NOFILE }, 'raised own hard RLIMIT_NOFILE for the runtimes')
}
